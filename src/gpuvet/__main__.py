from gpuvet.cli import console_main

console_main()
