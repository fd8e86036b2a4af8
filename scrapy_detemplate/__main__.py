from scrapy_detemplate.cli import main

raise SystemExit(main())
