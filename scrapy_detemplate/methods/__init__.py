"""Pure algorithms, one published method per module.

Modules here take lxml trees, strings or sequences of line keys and return
plain data (indexes, node sets, scores).  They never import Scrapy or Twisted
and never read settings.
"""
