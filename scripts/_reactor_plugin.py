"""pytest plugin for scripts/check_min_versions.sh: install Scrapy's asyncio reactor before the tests.

At the floor (Scrapy 2.13.4), ``scrapy.utils.test.get_crawler`` requires an installed reactor
(Scrapy's own test suite installs one); the Scrapy the test extra resolves today (2.19) does not.
The tests that build a crawler in-process need it at the lowest supported versions.
"""

from __future__ import annotations


def pytest_configure(config: object) -> None:
    from scrapy.utils.reactor import install_reactor, is_reactor_installed

    if not is_reactor_installed():
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
