"""pytest plugin for scripts/check_min_versions.sh: install Scrapy's asyncio reactor before the tests.

Scrapy before 2.14 makes ``scrapy.utils.test.get_crawler`` require an installed reactor (Scrapy's own
test suite installs one); later versions do not.  The tests that build a crawler in-process need it
at the lowest supported versions.
"""

from __future__ import annotations


def pytest_configure(config: object) -> None:
    from scrapy.utils.reactor import install_reactor, is_reactor_installed

    if not is_reactor_installed():
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
