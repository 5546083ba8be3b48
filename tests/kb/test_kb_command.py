import json

from gpuvet.cli import main
from gpuvet.kb import load


def test_kb_list_json(capsys):
    assert main(["kb", "list", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1 and doc["kb"]["version"] == load().version
    names = {row["name"]: row["records"] for row in doc["files"]}
    assert names["torch"] > 32 and names["gpus"] > 40


def test_kb_show_text(capsys):
    assert main(["kb", "show", "cuda_driver"]) == 0
    out = capsys.readouterr().out
    assert "family[12]" in out and "525.60.13" in out


def test_kb_show_unknown_name_is_one_line_error(capsys):
    assert main(["kb", "show", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and "torch" in err


def test_kb_sources_json(capsys):
    assert main(["kb", "sources", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert any(s["source"].startswith("https://docs.nvidia.com/deploy/cuda-compatibility") for s in doc["sources"])


def test_kb_list_chinese(capsys):
    assert main(["kb", "list", "--lang", "zh"]) == 0
    assert "知识库" in capsys.readouterr().out


def test_show_a_framework_reads_as_releases_with_their_builds_and_sources(capsys):
    assert main(["kb", "show", "torch", "2.1.2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("PyTorch (torch): ")
    assert "2.1.2  ·  Python >=3.8,<3.12  ·  plain pip install: cu121" in out
    assert "CUDA 12.1, cuDNN 8.9.2.26, NCCL 2.18.1, SASS " in out
    assert "$ pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu118" in out
    assert "Sources: " in out and "..." not in out  # nothing cut mid-word
    assert "2.3.0" not in out  # only the release asked for


def test_show_takes_a_distribution_name_and_says_when_a_release_is_unknown(capsys):
    assert main(["kb", "show", "paddlepaddle-gpu"]) == 0
    assert capsys.readouterr().out.startswith("PaddlePaddle (paddlepaddle): ")
    assert main(["kb", "show", "torch", "9.9"]) == 2
    err = capsys.readouterr().err
    assert "no release 9.9" in err and "1.0.0 to" in err


def test_sources_of_one_framework_are_only_its_own(capsys):
    assert main(["kb", "sources", "vllm", "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    records = [r for entry in doc["sources"] for r in entry["records"]]
    assert records and all(r.startswith("vllm:") for r in records)


# ------------------------------------------------------------------ kb status / kb harvest: what each library carries
# An overlay written by hand in the layout gpuvet kb harvest writes (gpuvet.sources.harvest.to_toml): each library of
# the wheel with CUDA code, unit by unit. fakepkg's kernels: 10 units with sm_80 and sm_90 SASS, 2 of them also with
# compute_90 PTX of ISA 8.4 and 1 of ISA 9.0 (two toolkits built it); a feature library with sm_90a only. oldpkg is an
# overlay of the older layout (pooled sass / ptx lists, no libraries).
OVERLAY = """[[build]]
framework = "fakepkg"
distribution = "fakepkg"
version = "1.0"
platform = "x86_64"
cuda = "12.4"
library = [{ "file" = "fakepkg/_C.so", "units" = [{ "count" = 7, "sass" = ["sm_80", "sm_90"], "ptx" = [] }, { "count" = 2, "sass" = ["sm_80", "sm_90"], "ptx" = ["compute_90"], "isa" = { "compute_90" = "8.4" } }, { "count" = 1, "sass" = ["sm_80", "sm_90"], "ptx" = ["compute_90"], "isa" = { "compute_90" = "9.0" } }] }, { "file" = "fakepkg/lib/libattn.so", "units" = [{ "count" = 4, "sass" = ["sm_90a"], "ptx" = [] }] }]
wheel = "fakepkg-1.0-py3-none-manylinux_2_17_x86_64.whl"
sha256 = "%s"
index_url = "https://example.invalid/simple"
read_on = "2020-01-02"
source = "https://example.invalid/simple: fakepkg 1.0, wheel fakepkg-1.0-py3-none-manylinux_2_17_x86_64.whl"

[[build]]
framework = "oldpkg"
distribution = "oldpkg"
version = "2.0"
platform = "x86_64"
sass = ["sm_70", "sm_80"]
ptx = ["compute_80"]
wheel = "oldpkg-2.0-py3-none-manylinux_2_17_x86_64.whl"
sha256 = "%s"
index_url = "https://example.invalid/simple"
read_on = "2020-01-02"
source = "https://example.invalid/simple: oldpkg 2.0, wheel oldpkg-2.0-py3-none-manylinux_2_17_x86_64.whl"
""" % ("1" * 64, "2" * 64)
KERNELS = [{"count": 7, "sass": ["sm_80", "sm_90"], "ptx": []},
           {"count": 2, "sass": ["sm_80", "sm_90"], "ptx": ["compute_90"], "isa": {"compute_90": "8.4"}},
           {"count": 1, "sass": ["sm_80", "sm_90"], "ptx": ["compute_90"], "isa": {"compute_90": "9.0"}}]
FEATURE = [{"count": 4, "sass": ["sm_90a"], "ptx": []}]


def _overlay(tmp_path, text=OVERLAY):
    folder = tmp_path / "overlay"
    (folder / "harvested").mkdir(parents=True)
    (folder / "harvested" / "fakepkg-1.0.toml").write_text(text)
    return folder


def test_status_shows_the_archs_of_every_library_and_what_each_carries(tmp_path, capsys):
    folder = _overlay(tmp_path)
    assert main(["kb", "status", "--overlay", str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  2 builds: 2 new, 0 the same as shipped, 0 disagreeing (the shipped list is used)" in out
    at = out.index("  adds      fakepkg 1.0 x86_64: sass sm_80 sm_90 sm_90a, ptx compute_90; not used by check (no "
                   "framework gpuvet covers, no CUDA code read, or its CUDA cannot be told)")
    assert out[at + 1] == ("            wheel fakepkg-1.0-py3-none-manylinux_2_17_x86_64.whl sha256 1111111111111111... "
                           "from https://example.invalid/simple on 2020-01-02")
    assert out[at + 2:at + 4] == [
        "            fakepkg/_C.so: 10 code units; SASS sm_80 sm_90; PTX compute_90 (in 3 of 10; ISA 8.4, 9.0)",
        "            fakepkg/lib/libattn.so: 4 code units; SASS sm_90a; PTX -"]
    # the older layout: its pooled lists, as one unit of a library named by the wheel
    at = out.index("  adds      oldpkg 2.0 x86_64: sass sm_70 sm_80, ptx compute_80; not used by check (no "
                   "framework gpuvet covers, no CUDA code read, or its CUDA cannot be told)")
    assert out[at + 2] == "            oldpkg-2.0-py3-none-manylinux_2_17_x86_64.whl: 1 code unit; SASS sm_70 sm_80; PTX compute_80"
    assert len(out) == at + 3

    assert main(["kb", "status", "--overlay", str(folder), "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["overlay"]["builds"]
    assert rows[0]["library"] == [{"file": "fakepkg/_C.so", "units": KERNELS},
                                  {"file": "fakepkg/lib/libattn.so", "units": FEATURE}]
    assert (rows[1]["sass"], rows[1]["ptx"]) == (["sm_70", "sm_80"], ["compute_80"])  # the record as written


def test_status_says_what_the_shipped_build_carries_when_the_overlay_disagrees(tmp_path, capsys, monkeypatch):
    from gpuvet.cli import kb as kb_command

    shipped = {"framework": "fakepkg", "distribution": "fakepkg", "version": "1.0", "platform": "x86_64",
               "wheel": "fakepkg-1.0-py3-none-manylinux_2_17_x86_64.whl", "sha256": "3" * 64, "source": "shipped",
               "library": [{"file": "fakepkg/_C.so", "units": [{"count": 10, "sass": ["sm_80"], "ptx": ["compute_80"],
                                                                "isa": {"compute_80": "8.4"}}]}]}
    monkeypatch.setattr(kb_command, "_shipped_index", lambda: {("fakepkg", "1.0", "x86_64"): [shipped]})
    assert main(["kb", "status", "--overlay", str(_overlay(tmp_path))]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("  disagrees fakepkg 1.0 x86_64: sass sm_80 sm_90 sm_90a, ptx compute_90; shipped sass sm_80, ptx "
                   "compute_80 (fakepkg-1.0-py3-none-manylinux_2_17_x86_64.whl)")
    assert out[at + 2:at + 5] == [
        "            fakepkg/_C.so: 10 code units; SASS sm_80 sm_90; PTX compute_90 (in 3 of 10; ISA 8.4, 9.0)",
        "            fakepkg/lib/libattn.so: 4 code units; SASS sm_90a; PTX -",
        "            shipped fakepkg/_C.so: 10 code units; SASS sm_80; PTX compute_80 (ISA 8.4)"]


def _record(library=None, **others):
    record = {"framework": "fakepkg", "distribution": "fakepkg", "version": "1.0", "platform": "x86_64",
              "wheel": "fakepkg-1.0-x.whl",
              "sha256": "1" * 64, "source": "s"}
    if library is not None:
        record["library"] = library
    return dict(record, **others)


def test_the_overlay_compares_readings_library_by_library():
    from gpuvet.kb import overlay

    key = ("fakepkg", "1.0", "x86_64")
    ours = _record([{"file": "fakepkg/_C.so", "units": KERNELS}, {"file": "fakepkg/lib/libattn.so", "units": FEATURE}])

    def status(shipped, build):
        (row,) = overlay.compare({key: [shipped]}, [build])
        return row

    # another artifact, the same code (libraries in another order, keys of a unit in another order): the same
    same = _record(list(reversed(ours["library"])), sha256="2" * 64)
    same["library"][1] = {"units": [dict(reversed(list(u.items()))) for u in KERNELS], "file": "fakepkg/_C.so"}
    assert status(same, ours)["status"] == "same"
    # the same archs, but one unit fewer carries the PTX: pooled lists could not tell, the units do
    fewer = [dict(KERNELS[0], count=8), KERNELS[1], dict(KERNELS[2], count=0)]
    row = status(_record([{"file": "fakepkg/_C.so", "units": fewer}, ours["library"][1]], sha256="2" * 64), ours)
    assert row["status"] == "disagrees"
    assert (row["shipped_sass"], row["shipped_ptx"]) == (["sm_80", "sm_90", "sm_90a"], ["compute_90"])
    assert row["shipped_library"][0]["units"] == fewer
    # an overlay of the older layout against a shipped record with libraries: compared by the archs they carry
    pooled = _record(sass=["sm_80", "sm_90", "sm_90a"], ptx=["compute_90"], sha256="2" * 64)
    assert status(ours, pooled)["status"] == "same"
    assert status(ours, dict(pooled, ptx=[]))["status"] == "disagrees"
    assert overlay.archs_of(pooled) == overlay.archs_of(ours) == (("sm_80", "sm_90", "sm_90a"), ("compute_90",))
    assert overlay.libraries_of(pooled) == [{"file": "fakepkg-1.0-x.whl", "units": [
        {"count": 1, "sass": ["sm_80", "sm_90", "sm_90a"], "ptx": ["compute_90"]}]}]
    assert overlay.archs_of(_record([])) == ((), ()) and overlay.libraries_of(_record()) == []


def test_the_loader_takes_an_overlay_build_only_when_a_library_carries_code(tmp_path):
    from gpuvet.kb import overlay
    from gpuvet.sources import harvest

    harvest.write_release(tmp_path, [_record([{"file": "fakepkg/_C.so", "units": KERNELS}])])
    harvest.write_release(tmp_path, [_record([], version="2.0", sha256="4" * 64),  # x86_64, no CUDA code read
                                     _record([], version="2.0", platform="aarch64", sha256="5" * 64)])
    index = {}
    overlay.merge_into(index, tmp_path)
    assert sorted(index) == [("fakepkg", "1.0", "x86_64"), ("fakepkg", "2.0", "aarch64")]  # an Arm build: CPU-only
    (added,) = index[("fakepkg", "1.0", "x86_64")]
    assert added["library"] == [{"file": "fakepkg/_C.so", "units": KERNELS}]
