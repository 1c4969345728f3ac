/// The inline stylesheet and script of `HTMLReporter` pages. Neither loads anything: the page's
/// Content Security Policy allows no network access at all.
enum HTMLAssets {
    static let css = """
    :root { --fg: #1d2330; --muted: #667085; --line: #c5cad3; --bg: #ffffff; --panel: #f5f6f8;
      --pass: #1a7f37; --fail: #c62828; --warn: #9a6700; --unsupported: #0969da; --error: #8250df; --timeout: #c62828;
      --lane: minmax(12em, 1fr); }
    * { box-sizing: border-box; }
    body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
      margin: 0 auto; padding: 1em 2em 4em; max-width: 110em; }
    h1 { font-size: 1.6em; margin: .2em 0; } h2 { font-size: 1.25em; margin: 1.4em 0 .5em; border-bottom: 1px solid var(--line); }
    h3 { font-size: 1.05em; margin: 0 0 .5em; }
    code, pre, .time, .label, .marker { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
    .meta, .source, .base-seed, .shared, small { color: var(--muted); }
    .noscript, .problem { background: #fff4e5; border: 1px solid #f0c36d; padding: .4em .8em; }
    .result { font-weight: 600; } .result-pass { color: var(--pass); } .result-fail { color: var(--fail); }
    .badge { display: inline-block; min-width: 6.5em; text-align: center; color: #fff; border-radius: 3px; padding: 0 .4em;
      font-size: 12px; font-weight: 600; }
    .badge.verdict-pass { background: var(--pass); } .badge.verdict-fail { background: var(--fail); }
    .badge.verdict-warn { background: var(--warn); } .badge.verdict-unsupported { background: var(--unsupported); }
    .badge.verdict-error { background: var(--error); } .badge.verdict-timeout { background: var(--timeout); }
    .count { white-space: nowrap; margin-right: .6em; } .count.verdict-pass { color: var(--pass); }
    .count.verdict-fail, .count.verdict-timeout { color: var(--fail); font-weight: 600; } .count.verdict-warn { color: var(--warn); }
    .count.verdict-error { color: var(--error); font-weight: 600; } .count.verdict-unsupported { color: var(--unsupported); }
    table.summary { border-collapse: collapse; margin: .5em 0; } table.summary th, table.summary td { border: 1px solid var(--line);
      padding: .25em .7em; text-align: left; } table.summary thead th { background: var(--panel); }
    .area-name { color: var(--muted); font-weight: normal; }
    .run-index { columns: 3 22em; padding-left: 1.5em; } .run-index a { text-decoration: none; color: inherit; }
    .root-causes li { margin-bottom: .6em; } .root-causes .sentence { margin: 0; font-weight: 600; }
    .cause-runs { margin: .1em 0 0; } .cause-runs a { margin-right: .5em; white-space: nowrap; }
    article.run, article.transcript { border: 1px solid var(--line); border-left-width: 5px; border-radius: 4px; padding: .8em 1em;
      margin: 1em 0; }
    article.run.verdict-fail, article.run.verdict-timeout { border-left-color: var(--fail); }
    article.run.verdict-error { border-left-color: var(--error); } article.run.verdict-warn { border-left-color: var(--warn); }
    article.run.verdict-pass { border-left-color: var(--pass); } article.run.verdict-unsupported { border-left-color: var(--unsupported); }
    article:target { box-shadow: 0 0 0 3px #8ab4f8; }
    dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15em 1em; margin: .3em 0 .8em; }
    dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
    dd.message, dd.actual { font-weight: 600; } code.replay { background: var(--panel); padding: .1em .4em; user-select: all; }
    details > summary { cursor: pointer; } pre.log { background: var(--panel); padding: .6em; overflow: auto; max-height: 30em; }
    .diagram-wrap > summary { font-weight: 600; margin: .4em 0; } .file { font-weight: normal; color: var(--muted); }
    .diagram { border: 1px solid var(--line); border-radius: 4px; overflow-x: auto; margin: .3em 0 1em; }
    .toolbar { padding: .3em .5em; background: var(--panel); border-bottom: 1px solid var(--line); font-size: 12px; }
    .toolbar button { font-size: 12px; } .legend { color: var(--muted); margin-left: 1em; }
    .row { display: grid; grid-template-columns: 6.5em 5.5em repeat(var(--lanes), var(--lane)); align-items: center; min-height: 1.6em;
      min-width: calc(12em + var(--lanes) * 12em); }
    .row > * { grid-row: 1; }
    summary.row { list-style: none; } summary.row::-webkit-details-marker { display: none; }
    .row.head { position: sticky; top: 0; background: var(--bg); z-index: 2; border-bottom: 1px solid var(--line); min-height: 2.6em; }
    .lane-head { text-align: center; line-height: 1.15; padding: .2em; } .lane-head b { display: block; }
    .lane-head small { display: block; font-size: 11px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .time { color: var(--muted); padding: 0 .4em; white-space: nowrap; text-align: right; font-size: 11.5px; }
    .time.clock { grid-column: 1; } .time.wall { grid-column: 2; }
    .row > .time { position: sticky; z-index: 2; background: var(--bg); align-self: stretch; display: flex; align-items: center; justify-content: flex-end; }
    .row > .time.clock { left: 0; } .row > .time.wall { left: 6.5em; }
    .life { align-self: stretch; background: linear-gradient(var(--line), var(--line)) no-repeat center / 1px 100%; }
    .life.idle { background: none; }
    .arrow { position: relative; display: block; height: 1.6em; margin: 0 calc(100% / var(--span) / 2); z-index: 1; }
    .arrow::before { content: ""; position: absolute; left: 0; right: 0; top: 1.1em; border-top: 1.5px solid #4b5563; }
    .arrow.out::after, .arrow.dropped::after { content: ""; position: absolute; right: -1px; top: calc(1.1em - 4px);
      border: 4.5px solid transparent; border-left: 7px solid #4b5563; border-right: 0; }
    .arrow.in::after { content: ""; position: absolute; left: -1px; top: calc(1.1em - 4px);
      border: 4.5px solid transparent; border-right: 7px solid #1f6feb; border-left: 0; }
    .arrow.in::before { border-top-color: #1f6feb; }
    .arrow.dropped::before { border-top-style: dashed; border-top-color: var(--fail); }
    .arrow.dropped::after { border-left-color: var(--fail); }
    .arrow .label { position: absolute; left: .6em; top: 0; white-space: nowrap; line-height: 1.1em; padding: 0 .3em;
      background: rgba(255, 255, 255, .85); border-radius: 2px; }
    .arrow.in .label { color: #0b4fae; }
    .tag { display: inline-block; font-size: 10.5px; background: #eef1f5; color: #444; border-radius: 3px; padding: 0 .3em; margin-left: .4em; }
    .arrow.dropped .tag { background: #fde8e8; color: var(--fail); }
    details.msg:hover > summary, details.msg.expanded > summary { background: #f0f6ff; }
    details.msg.expanded > summary .label { font-weight: 600; }
    .frame-body { margin: 0 0 .4em 12em; border-left: 3px solid #8ab4f8; padding: .2em .6em; background: #fafbfc; }
    .frame-body .wire { margin: 0; color: var(--muted); font-size: 12px; }
    pre.frame-json { margin: .3em 0; max-height: 40em; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
    .marker { position: relative; z-index: 1; padding: 0 .5em; white-space: nowrap; }
    .marker.open, .marker.close { justify-self: center; background: rgba(255, 255, 255, .85); border-radius: 2px; }
    .marker.note { color: var(--muted); font-style: italic; }
    .marker.open { color: var(--pass); } .marker.close { color: #8a3b12; font-weight: 600; }
    .marker.fault { color: #9a3412; font-weight: 600; } .row.fault { background: #fff7ed; }
    .marker.operator { color: #1e40af; font-weight: 600; } .row.operator { background: #eff6ff; }
    .row.failure { background: #fdecea; } .marker.failure { color: var(--fail); font-weight: 700; white-space: normal; }
    details.repeat > summary.row { background: #f6f8fa; } .repeat-label { color: var(--muted); }
    details.repeat[open] > summary.row { border-bottom: 1px dashed var(--line); }
    .no-transcript, .empty { color: var(--muted); font-style: italic; }
    """

    static let script = """
    (function () {
      'use strict';
      var frames = {};
      var data = document.getElementById('report-data');
      try { frames = JSON.parse(data ? data.textContent : '{}').frames || {}; } catch (e) { frames = {}; }
      function fill(details) {
        var pre = details.querySelector('.frame-body > pre.frame-json');
        if (!pre || pre.getAttribute('data-filled') === '1') { return; }
        var frame = frames[details.id];
        pre.textContent = frame === undefined ? '(this frame is not embedded)' : JSON.stringify(frame, null, 2);
        pre.setAttribute('data-filled', '1');
      }
      function expand(details) {
        details.open = true;
        fill(details);
        details.classList.add('expanded');
      }
      document.addEventListener('toggle', function (event) {
        var details = event.target;
        if (!details.classList || !details.classList.contains('msg')) { return; }
        if (details.open) { fill(details); details.classList.add('expanded'); } else { details.classList.remove('expanded'); }
      }, true);
      // ?expand=ID opens an element where it is (for screenshots); #ID also scrolls to it.
      function reveal(wanted, scroll) {
        var element = wanted ? document.getElementById(wanted) : null;
        if (!element) { return; }
        for (var node = element; node; node = node.parentElement) {
          if (node.tagName === 'DETAILS') { node.open = true; }
        }
        if (element.classList.contains('msg')) { expand(element); }
        if (scroll) { element.scrollIntoView({ block: 'start' }); }
      }
      function target() {
        var query = new URLSearchParams(location.search).get('expand');
        if (query) { query.split(',').forEach(function (id) { reveal(id, false); }); }
        if (location.hash.length > 1) { reveal(decodeURIComponent(location.hash.slice(1)), true); }
      }
      document.addEventListener('click', function (event) {
        var button = event.target.closest ? event.target.closest('button[data-action]') : null;
        if (!button) { return; }
        var diagram = button.closest('.diagram');
        var all = diagram ? diagram.querySelectorAll('details.msg') : [];
        for (var i = 0; i < all.length; i++) {
          if (button.getAttribute('data-action') === 'expand-all') { expand(all[i]); } else { all[i].open = false; all[i].classList.remove('expanded'); }
        }
        if (diagram) {
          var groups = diagram.querySelectorAll('details.repeat');
          for (var j = 0; j < groups.length; j++) { groups[j].open = button.getAttribute('data-action') === 'expand-all'; }
        }
      });
      window.addEventListener('hashchange', target);
      target();
    })();

    """
}
