from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate.config import DEFAULT_SETTINGS, DetemplateConfig, InvalidSetting, directory_key


def test_defaults_match_the_settings_table():
    config = DetemplateConfig.from_settings({})
    for name, value in DEFAULT_SETTINGS.items():
        if name not in ("DETEMPLATE_ENABLED", "DETEMPLATE_SITE_KEY"):
            assert getattr(config, name.removeprefix("DETEMPLATE_").lower()) == value, name


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DETEMPLATE_METHOD", "no-such-method"),
        ("DETEMPLATE_MAX_BYTES", "lots"),
        ("DETEMPLATE_MAX_NODES", 0),
        ("DETEMPLATE_REPLACE_BODY", "maybe"),
        ("DETEMPLATE_SANDWICH_UNIT", "words"),
        ("DETEMPLATE_SANDWICH_PEER", "random"),
        ("DETEMPLATE_SITE_KEY", "no.such.module.fn"),
    ],
)
def test_invalid_settings_name_the_setting_and_the_value(name, value):
    with pytest.raises(InvalidSetting) as info:
        DetemplateConfig.from_settings({name: value})
    assert name in str(info.value)
    assert repr(value) in str(info.value)


def test_settings_given_as_text_are_coerced():
    config = DetemplateConfig.from_settings(
        {"DETEMPLATE_MAX_NODES": "12", "DETEMPLATE_REPLACE_BODY": "true", "DETEMPLATE_SANDWICH_UNIT": "source"}
    )
    assert (config.max_nodes, config.replace_body, config.sandwich_unit) == (12, True, "source")


def test_site_key_can_be_an_import_path():
    config = DetemplateConfig.from_settings({"DETEMPLATE_SITE_KEY": "os.path.basename"})
    assert config.site_key("http://x/a/b") == "b"


def test_directory_key_is_site_plus_path_directory():
    assert directory_key("http://Ex.com/a/b/c.html?q=1", "ex.com") == "ex.com/a/b/"
    assert directory_key("http://ex.com", "ex.com") == "ex.com/"


@pytest.mark.parametrize(("name", "value"), [("DETEMPLATE_REPORT_PAGES", -1), ("DETEMPLATE_REPORT_PAGES", "many")])
def test_bad_report_settings_are_named(name, value):
    with pytest.raises(InvalidSetting, match=name):
        DetemplateConfig.from_settings({name: value})


def test_report_settings_default_off_with_three_samples():
    config = DetemplateConfig.from_settings({})
    assert (config.report_dir, config.report_pages) == ("", 3)
    config = DetemplateConfig.from_settings({"DETEMPLATE_REPORT_DIR": "r", "DETEMPLATE_REPORT_PAGES": "5"})
    assert (config.report_dir, config.report_pages) == ("r", 5)


NUMERIC = sorted(n for n, v in DEFAULT_SETTINGS.items() if isinstance(v, (int, float)) and not isinstance(v, bool))


def test_every_numeric_setting_is_covered():
    assert len(NUMERIC) >= 30 and "DETEMPLATE_SEGMENTS_N" in NUMERIC and "DETEMPLATE_MAX_NODES" in NUMERIC


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DETEMPLATE_SEGMENTS_N", "inf"),  # issue 16: overflowed later without naming the setting
        ("DETEMPLATE_SEGMENTS_N", float("inf")),
        ("DETEMPLATE_COMBINED_SITE_DF", "nan"),  # issue 16: accepted
        ("DETEMPLATE_COMBINED_SITE_DF", float("nan")),
        ("DETEMPLATE_MAX_NODES", 1.9),  # issue 16: silently 1
        ("DETEMPLATE_MAX_NODES", "1.9"),
        ("DETEMPLATE_RTDM_MAX_CELLS", float("inf")),
    ],
)
def test_non_finite_and_non_integral_numbers_are_rejected_naming_setting_and_value(name, value):
    with pytest.raises(InvalidSetting) as info:
        DetemplateConfig.from_settings({name: value})
    assert f"{name}={value!r}" in str(info.value)


@pytest.mark.parametrize("name", NUMERIC)
def test_numeric_settings_take_their_type_or_fail_naming_the_setting(name):
    default = DEFAULT_SETTINGS[name]
    field = name.removeprefix("DETEMPLATE_").lower()
    whole = DetemplateConfig.from_settings({name: float(default)})  # 5.0 for an int setting is 5
    assert getattr(whole, field) == default and type(getattr(whole, field)) is type(default)

    numbers = st.one_of(st.floats(), st.integers(-(10**6), 10**15), st.floats().map(str), st.text(max_size=6))

    @settings(derandomize=True, max_examples=60, deadline=None)
    @given(numbers)
    def check(raw: object) -> None:
        try:
            config = DetemplateConfig.from_settings({name: raw})
        except InvalidSetting as exc:
            assert exc.name == name
            return
        value = getattr(config, field)
        assert type(value) is type(default) and math.isfinite(value)
        if isinstance(raw, (int, float)):
            assert value == raw  # never rounded: 1.9 is not 1

    check()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1.5, True])
def test_the_library_config_checks_types_too(value):
    with pytest.raises(InvalidSetting):
        DetemplateConfig(max_nodes=value)  # type: ignore[arg-type]
    if not isinstance(value, bool) and not (isinstance(value, float) and value == 1.5):
        with pytest.raises(InvalidSetting):
            DetemplateConfig(segments_n=value)
