"""`gpuvet archs` through gpuvet.cli.main: text, JSON (docs/CONTRACT.md §3), folders, exit codes."""

import json
import re
import shutil
from collections import Counter

import pytest

from gpuvet.cli import main
from gpuvet.cli.archs import _cuda_for_isa
from gpuvet.probe.binaries import scan_file

from .conftest import PTX_ISAS, RELOCATABLE, UNIT_PTX, UNIT_SOURCES, nvcc_path, ptx_fatbin


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
    listed = [{k: item[k] for k in ("path", "sass", "ptx", "error")} for item in document["files"]]
    assert listed == [
        {"path": str(folder / "libmulti.so"), "sass": ["sm_75", "sm_90a", "sm_100f", "sm_120"], "ptx": ["compute_90"], "error": None},
        {"path": str(folder / "sub" / "app"), "sass": ["sm_86"], "ptx": ["compute_89"], "error": None},
    ]
    for item in document["files"]:
        assert set(item) == {"path", "sass", "ptx", "error", "units", "coverage", "ptx_isa"}  # no relocatable code
        assert item["units"] == scan_file(item["path"]).units
        assert item["coverage"] == _coverage(item["units"])
        assert set(item["ptx_isa"]) == set(item["ptx"])


def _coverage(groups):
    counted = Counter()
    for group in groups:
        counted.update({arch: group["count"] for arch in group["sass"] + group["ptx"]})
    return dict(counted)


def _version_line(path):
    return re.search(r"^\s*\.version\s+(\S+)\s*$", path.read_text(), re.M).group(1)


def _kb_cuda(isa):
    from gpuvet.kb import load

    return load().cuda_for_ptx_isa(isa)


def test_coverage_over_the_code_units_of_a_three_unit_library(cuda_builds, capsys):
    library = str(cuda_builds["libunits.so"])
    assert main(["archs", library, "--format", "json"]) == 0
    (item,) = json.loads(capsys.readouterr().out)["files"]
    # each arch's count is the number of translation units compiled for it (g++ linked them: no other unit)
    asked = Counter(code.split("code=", 1)[1] for args in UNIT_SOURCES.values() for code in args if "code=" in code)
    assert item["coverage"] == dict(asked) and sum(g["count"] for g in item["units"]) == len(UNIT_SOURCES)
    isa = _version_line(cuda_builds["unit_c.ptx"])
    assert item["ptx_isa"] == {UNIT_PTX: [isa]}

    assert main(["archs", library, "--lang", "en"]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = len(UNIT_SOURCES)
    assert lines[0] == "%s  (%d code units)" % (library, total)
    sass_line = "; ".join("%s (%d of %d units)" % (arch, asked[arch], total)
                          for arch in sorted((a for a in asked if a.startswith("sm_")), key=lambda a: -asked[a]))
    assert lines[1] == "  SASS: " + sass_line
    assert lines[2] == "  PTX:  %s (%d of %d units)" % (UNIT_PTX, asked[UNIT_PTX], total)
    assert lines[3] == "        %s: PTX ISA %s (CUDA %s); %s" % (
        UNIT_PTX, isa, _kb_cuda(isa), "a driver JIT-compiles PTX only if it supports the CUDA release that wrote it, or a newer one")
    assert len(lines) == 4


def test_ptx_isa_and_its_cuda_in_text_and_json(cuda_builds, tmp_path, capsys):
    mixed = tmp_path / "mixed.fatbin"  # two units whose PTX was written at two ISA versions
    mixed.write_bytes(b"".join(cuda_builds["isa-%s.fatbin" % isa].read_bytes() for isa in PTX_ISAS))
    unknown = ptx_fatbin(nvcc_path(), tmp_path, "99.0", "unknown.fatbin")  # an ISA no CUDA release writes
    assert _kb_cuda("99.0") is None
    assert main(["archs", str(mixed), str(unknown), "--format", "json"]) == 0
    first, second = json.loads(capsys.readouterr().out)["files"]
    versions = [_version_line(cuda_builds["isa-%s.ptx" % isa]) for isa in PTX_ISAS]
    assert first["ptx_isa"] == {"compute_80": versions} and first["coverage"] == {"compute_80": len(PTX_ISAS)}
    assert second["ptx_isa"] == {"compute_80": ["99.0"]}

    assert main(["archs", str(mixed), str(unknown), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    named = ", ".join("%s (CUDA %s)" % (isa, _kb_cuda(isa)) for isa in versions)
    assert "compute_80: PTX ISA %s; a driver JIT-compiles" % named in out
    assert "compute_80: PTX ISA 99.0 (a version gpuvet cannot match to a CUDA release)" in out
    assert "PTX:  compute_80 (2 of 2 units)" in out and "SASS: none" in out

    assert main(["archs", str(mixed), "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "（2 个代码单元）" in out and "compute_80（2 个单元中的 2 个）" in out
    assert "compute_80：PTX ISA %s；" % "、".join("%s（CUDA %s）" % (i, _kb_cuda(i)) for i in versions) in out


def test_the_isa_table_read_alone_is_the_knowledge_base_s():
    from gpuvet.kb import load

    table = _cuda_for_isa()
    assert table and all(load().cuda_for_ptx_isa(isa) == cuda for isa, cuda in table.items())


@pytest.mark.parametrize("lang, said", [("en", "relocatable device code"), ("zh", "可重定位设备代码")])
def test_relocatable_code_is_shown_apart_and_not_as_loadable_archs(cuda_builds, capsys, lang, said):
    path = str(cuda_builds["rdc.o"])
    sass, ptx = RELOCATABLE["rdc.o"]
    assert main(["archs", path, "--format", "json"]) == 0  # a readable file, whatever it holds
    (item,) = json.loads(capsys.readouterr().out)["files"]
    assert (item["sass"], item["ptx"], item["units"], item["coverage"]) == ([], [], [], {})
    assert item["relocatable"] == {"sass": sass, "ptx": ptx}
    assert main(["archs", path, "--lang", lang]) == 0
    lines = capsys.readouterr().out.splitlines()
    none = "none" if lang == "en" else "无"
    assert lines[:3] == [path, "  SASS: " + none, "  PTX:  " + none]
    (relocatable,) = lines[3:]
    assert said in relocatable and " ".join(sass + ptx) in relocatable and "nvlink" in relocatable


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
