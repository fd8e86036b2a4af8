from __future__ import annotations

import pytest

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
