"""Settings of the example project: scrapy-detemplate is one line."""

BOT_NAME = "demo"
SPIDER_MODULES = ["demo.spiders"]
NEWSPIDER_MODULE = "demo.spiders"

# Everything on, with defaults: the downloader middleware cleans each page as
# it arrives, the spider middleware puts the clean text into items ("content").
ADDONS = {"scrapy_detemplate.Addon": 0}

# Optional: choose the method and the item fields (see the README's settings table).
DETEMPLATE_METHOD = "combined"  # the default; e.g. "sandwich", "segments", "tps"
DETEMPLATE_TEXT_FIELD = "content"

# The demo site runs on 127.0.0.1: crawl it politely but quickly.
ROBOTSTXT_OBEY = False
CONCURRENT_REQUESTS = 4
DOWNLOAD_DELAY = 0
LOG_LEVEL = "INFO"
TELNETCONSOLE_ENABLED = False
FEED_EXPORT_ENCODING = "utf-8"
