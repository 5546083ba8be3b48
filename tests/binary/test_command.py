"""`gpuvet archs` through gpuvet.cli.main: text, JSON (DESIGN.md §4), folders, exit codes."""

import json
import shutil

from gpuvet.cli import main


def _folder(cuda_builds, tmp_path):
    folder = tmp_path / "bins"
    (folder / "sub").mkdir(parents=True)
    shutil.copy(str(cuda_builds["libmulti.so"]), str(folder / "libmulti.so"))
    shutil.copy(str(cuda_builds["app"]), str(folder / "sub" / "app"))
    (folder / "README").write_text("not a binary")
    shutil.copy("/bin/ls", str(folder / "ls"))  # ELF without CUDA code: left out
    return folder


def test_json_on_a_folder(cuda_builds, tmp_path, capsys):
    folder = _folder(cuda_builds, tmp_path)
    assert main(["archs", str(folder), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema_version"] == 1 and document["gpuvet_version"]
    assert document["files"] == [
        {"path": str(folder / "libmulti.so"), "sass": ["sm_75", "sm_90a", "sm_100f", "sm_120"], "ptx": ["compute_90"], "error": None},
        {"path": str(folder / "sub" / "app"), "sass": ["sm_86"], "ptx": ["compute_89"], "error": None},
    ]


def test_text_lists_archs_and_errors(cuda_builds, tmp_path, capsys):
    folder = _folder(cuda_builds, tmp_path)
    broken = folder / "libbroken.so"
    broken.write_bytes(cuda_builds["libplain.so"].read_bytes()[:5000])
    assert main(["archs", str(folder), "--lang", "en"]) == 0  # some files readable: exit 0, the error is listed
    out = capsys.readouterr().out
    assert "SASS: sm_75 sm_90a sm_100f sm_120" in out and "PTX:  compute_90" in out
    assert str(broken) in out and "unreadable: " in out and "truncated" in out


def test_output_file_and_chinese(cuda_builds, tmp_path, capsys):
    target = tmp_path / "out.txt"
    assert main(["archs", str(cuda_builds["ptxonly.o"]), "--lang", "zh", "-o", str(target)]) == 0
    text = target.read_text()
    assert "SASS: 无" in text and "compute_90" in text


def test_no_cuda_code(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("x")
    assert main(["archs", str(tmp_path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"] == []
    assert main(["archs", str(tmp_path), "--lang", "en"]) == 0
    assert "No CUDA code found" in capsys.readouterr().out


def test_missing_path_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["archs", str(tmp_path / "nope.so")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and "nope.so" in captured.err and "Traceback" not in captured.err


def test_nothing_readable_is_exit_2_with_the_reasons_printed(cuda_builds, tmp_path, capsys):
    broken = tmp_path / "libbroken.so"
    broken.write_bytes(cuda_builds["libplain.so"].read_bytes()[:5000])
    assert main(["archs", str(broken), "--format", "json"]) == 2
    captured = capsys.readouterr()
    (item,) = json.loads(captured.out)["files"]
    assert item["error"].startswith("unreadable: ")
    assert captured.err.count("\n") == 1 and "error:" in captured.err


def test_the_exit_code_does_not_depend_on_naming_the_file_or_its_folder(cuda_builds, tmp_path, capsys):
    folder = tmp_path / "pkg"
    folder.mkdir()
    broken = folder / "libbroken.so"
    broken.write_bytes(cuda_builds["libmulti.so"].read_bytes()[:3000])  # an ELF cut short
    shutil.copy("/bin/true", folder / "true")  # an ELF without CUDA code does not count
    assert main(["archs", str(broken)]) == 2
    assert main(["archs", str(folder)]) == 2
    shutil.copy(cuda_builds["libptxonly.so"], folder / "libptxonly.so")
    assert main(["archs", str(folder), "--format", "json"]) == 0  # one readable CUDA binary: the rest is reported
    capsys.readouterr()
