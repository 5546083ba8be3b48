"""The signature data files: valid, sourced, anchored (fast), and every message they use exists in en and zh."""

from __future__ import annotations

import re

import pytest

from gpuvet.diagnose.anchors import anchors
from gpuvet.diagnose.signatures import DATA_DIR, gpu_cc_holds, load_signatures
from gpuvet.errors import KnowledgeBaseError
from gpuvet.i18n import catalog
from gpuvet.models import FINDING_CODES
from gpuvet.tomlfile import load_toml

BASE = load_signatures()


def test_every_signature_file_is_valid_and_sourced():
    # user_words.toml is no signature file: the user's words per cause (tests/diagnose/test_user_words.py)
    files = [p for p in DATA_DIR.glob("*.toml") if p.name not in ("codes.toml", "compat.toml", "user_words.toml")]
    assert len(files) >= 6
    for path in files:
        records = load_toml(path)["signature"]
        assert records, path.name
        for record in records:
            assert record["source"].startswith("https://"), (path.name, record["id"])
            assert record["code"] in FINDING_CODES, (path.name, record["id"])
            assert 0 < record["weight"] <= 1
            for pattern in record["patterns"]:
                re.compile(pattern)


def test_every_code_has_chain_rank_and_fix_source():
    codes = load_toml(DATA_DIR / "codes.toml")
    assert set(FINDING_CODES) <= set(codes)
    for code, record in codes.items():
        if code == "_frameworks":  # each framework's own commands, each with its source
            assert all(r["source"].startswith("https://") for r in record.values())
            continue
        assert record["source"].startswith("https://"), code
        assert isinstance(record["rank"], int)
    # the chain order the user relies on: driver before CUDA before cuDNN before the framework build
    assert codes["driver_too_old"]["rank"] < codes["cuda_library_missing"]["rank"] < codes["cudnn_mismatch"]["rank"]
    assert codes["cudnn_mismatch"]["rank"] < codes["arch_not_in_build"]["rank"] < codes["not_a_stack_problem"]["rank"]


def test_every_pattern_has_a_literal_anchor_so_big_logs_stay_fast():
    unanchored = [(s.id, p.pattern) for s in BASE.signatures for p in s.scan if not p.anchors]
    assert unanchored == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_message_the_engine_can_emit_exists(lang):
    messages = catalog(lang)
    needed = {s.explain for s in BASE.signatures}
    needed |= {"diagnose.code.%s.%s" % (code, part) for code in BASE.codes for part in ("title", "fix")}
    missing = sorted(m for m in needed if m not in messages)
    assert missing == []


def test_same_ids_in_both_languages():
    # "<id>.one" is English's singular form; Chinese has one plural form and so no such entries (gpuvet.i18n)
    en = {k for k in catalog("en") if k.startswith("diagnose.") and not k.endswith(".one")}
    zh = {k for k in catalog("zh") if k.startswith("diagnose.")}
    assert en == zh


def test_a_broken_signature_file_is_refused_with_the_record_named(tmp_path):
    (tmp_path / "codes.toml").write_text((DATA_DIR / "codes.toml").read_text())
    (tmp_path / "bad.toml").write_text(
        "[[signature]]\nid = \"x\"\ncode = \"not_a_code\"\nweight = 0.5\npatterns = ['a']\nsource = \"https://e\"\n"
    )
    with pytest.raises(KnowledgeBaseError, match="bad.toml record 1"):
        load_signatures(str(tmp_path))
    (tmp_path / "bad.toml").write_text(
        "[[signature]]\nid = \"x\"\ncode = \"no_driver\"\nweight = 0.5\npatterns = ['a']\n"
    )
    with pytest.raises(KnowledgeBaseError, match="no source"):
        load_signatures(str(tmp_path) + "/")


def test_anchors_are_required_literals():
    assert anchors("CUDA driver version is insufficient") == ["cuda driver version is insufficient"]
    assert anchors(r"(?:lib(cudart|cublas)\.so): cannot open shared object file") == [".so: cannot open shared object file"]
    assert anchors("显存不足") == ["显存不足"]
    assert anchors(r"\d+\.\d+") is None


def _one_rule(folder, fields: str) -> str:
    """A data folder of the shipped codes and one signature of ``fields`` (id, code and weight given), for the loader."""
    (folder / "codes.toml").write_text((DATA_DIR / "codes.toml").read_text())
    (folder / "rules.toml").write_text('[[signature]]\nid = "in_pod"\ncode = "container_gpu_not_exposed"\n'
                                       'weight = 0.9\nsource = "https://example.org/"\n' + fields)
    return str(folder)


def test_a_context_rule_that_supersedes_an_unknown_signature_is_refused(tmp_path):
    with pytest.raises(KnowledgeBaseError, match="no_such_signature"):
        load_signatures(_one_rule(tmp_path, "patterns = ['libcuda']\ncontext = ['kubernetes']\n"
                                            "supersedes = ['no_such_signature']\n"))
    with pytest.raises(KnowledgeBaseError, match="supersedes needs a context"):
        load_signatures(_one_rule(tmp_path, "patterns = ['libcuda']\nsupersedes = ['in_pod']\n") + "//")


def test_a_gpu_cc_condition_must_be_a_specifier_and_holds_only_for_a_known_gpu(tmp_path):
    with pytest.raises(KnowledgeBaseError, match="gpu_cc must be a version specifier"):
        load_signatures(_one_rule(tmp_path, "patterns = ['no kernel image']\ngpu_cc = 'Turing'\n"))
    assert gpu_cc_holds("", None) and gpu_cc_holds("==7.5", "7.5") and gpu_cc_holds(">=8.0,!=9.0", "12.0")
    assert not gpu_cc_holds("==7.5", None) and not gpu_cc_holds(">=8.0,!=9.0", "9.0")
