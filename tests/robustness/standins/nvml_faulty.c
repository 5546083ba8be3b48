/*
 * A broken libnvidia-ml.so.1 for the fault suite (tests/robustness/test_faults.py): nvmlInit never returns
 * (built as is: a wedged GPU), or dereferences NULL (built with -DFAULT_SEGV: a broken or mismatched library that
 * kills the process that loaded it). Only the entry points nvidia-ml-py needs to reach nvmlInit are exported.
 */
#include <unistd.h>

typedef int nvmlReturn_t;

static nvmlReturn_t fault(void) {
#ifdef FAULT_SEGV
    volatile int *nowhere = (volatile int *)0;
    *nowhere = 1;
#endif
    for (;;)
        pause();
    return 0;
}

nvmlReturn_t nvmlInit_v2(void) { return fault(); }
nvmlReturn_t nvmlInit(void) { return fault(); }
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return fault(); }
nvmlReturn_t nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(nvmlReturn_t result) { (void)result; return "Unknown Error"; }
