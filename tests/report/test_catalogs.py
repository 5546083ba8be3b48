"""Every message exists in English and Chinese, with the same placeholders: over ALL catalogs of every area."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from gpuvet.i18n import LANGS, catalog
from gpuvet.tomlfile import load_toml

I18N = Path(__file__).resolve().parents[2] / "src" / "gpuvet" / "i18n"


def _placeholders(template: str):
    return sorted({field.split(".")[0].split("[")[0] for _, field, _, _ in string.Formatter().parse(template) if field})


def _files(lang):
    return {path.name for path in (I18N / lang).glob("*.toml")}


def test_every_area_has_a_catalog_in_every_language():
    assert _files("en") == _files("zh")


@pytest.mark.parametrize("area", sorted(_files("en")))
def test_same_ids_and_placeholders_in_both_languages(area):
    en, zh = load_toml(I18N / "en" / area), load_toml(I18N / "zh" / area)
    # "<id>.one": English's singular form (count == 1) of <id>; Chinese has one plural form, so it has none
    singular = {key for key in en if key.endswith(".one")}
    assert all(key[:-len(".one")] in en for key in singular), "a singular form without its sentence"
    en = {key: value for key, value in en.items() if key not in singular}
    assert sorted(set(en) - set(zh)) == [], "missing in zh"
    assert sorted(set(zh) - set(en)) == [], "missing in en"
    differing = {key: (_placeholders(en[key]), _placeholders(zh[key])) for key in en
                 if _placeholders(en[key]) != _placeholders(zh[key])}
    assert differing == {}


def test_catalogs_load_without_duplicate_ids_and_every_template_formats():
    for lang in LANGS:
        messages = catalog(lang)  # raises on an id defined in two files
        for key, template in messages.items():
            assert isinstance(template, str) and template.strip(), key
            template.format(**{name: "x" for name in _placeholders(template)})


def test_my_area_ids_are_prefixed():
    for area in ("reports.toml",):
        assert all(key.startswith(("reports.", "mirror.")) for key in load_toml(I18N / "en" / area))
