import sys, time, itertools, statistics as S
sys.path.insert(0, '.')
import lxml.html
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.engine import Detemplater, remove_template
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate._html import decode_html, parse_html, count_nodes, deeper_than, visible_lines
from scrapy_detemplate.runners import ParsedPage
from scrapy_detemplate.runners.combined import decide, keep_table_rows_whole
from scrapy_detemplate.methods.density import line_features
corpus = sys.argv[1]
pages = list(itertools.islice(read_manifest(f'/work/shared/corpus/{corpus}.manifest.jsonl'), 120))
det = Detemplater(DetemplateConfig())
r = det.runner
ev = r._evidence
ratios = {}
T = time.perf_counter
for k, p in enumerate(pages):
    t0=T(); lxml.html.document_fromstring(p.body); parse=T()-t0
    ph = {}
    t=T(); _, html = decode_html(p.body, 'text/html'); ph['decode']=T()-t
    t=T(); root = parse_html(html); ph['parse']=T()-t
    if root is None: continue
    t=T(); count_nodes(root); deeper_than(root, 200); ph['checks']=T()-t
    page = ParsedPage.of(p.url, html, root, det.config)
    t=T(); lines = page.lines; ph['lines']=T()-t
    if not lines: continue
    t=T(); title = root.findtext('.//title') or ''; rows = line_features(root, lines, title); ph['line_features']=T()-t
    t=T(); site = ev.site_features(page); ph['site_features']=T()-t
    for a,b in zip(rows, site): a += b
    t=T(); tpl = decide(rows, r._probabilities, r._threshold, r._site_df); ph['decide']=T()-t
    t=T(); tpl = keep_table_rows_whole(lines, tpl); ph['rows']=T()-t
    from scrapy_detemplate.runners.base import Verdict
    v = Verdict(template_lines=tpl)
    t=T(); out = remove_template(page, v); ph['remove']=T()-t
    t=T(); clean = [l.text for l in visible_lines(out)]; ph['clean_lines']=T()-t
    t=T(); h = lxml.html.tostring(out, encoding='unicode'); ph['tostring']=T()-t
    if k < 20: continue
    for key, val in ph.items(): ratios.setdefault(key, []).append(val/parse)
tot = 0
for key, v in ratios.items():
    m = S.median(v); tot += S.mean(v)
    print(f'{key:15s} median {m:.2f} mean {S.mean(v):.2f}')
print('sum of means', round(tot,2))
