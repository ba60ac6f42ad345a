// SPDX-License-Identifier: Apache-2.0
// The HTML report's one inline style sheet: light and dark colour schemes, narrow screens, print.
#include "report/html_style.hpp"

namespace gua::report::html {

const std::string_view k_style = R"css(
:root{color-scheme:light dark;--bg:#fff;--fg:#1c232b;--muted:#5b6673;--line:#d9dfe6;
--panel:#f5f7f9;--active:#2c9a5c;--held:#e07c0b;--idle:#a9b5c3;--unm:#8f83c9;--track:#eceff3;
--bad:#b8321c;--good:#237a49;--link:#1a5fd0;
--q0:#f1f7f2;--q1:#dcefe1;--q2:#c3e4cc;--q3:#a6d6b4;--q4:#86c59a;--q5:#65b27f;--q6:#479d66;
--q7:#2f874f;--q8:#1d6e3c;--q9:#0e552b}
@media (prefers-color-scheme:dark){:root{--bg:#11161c;--fg:#e3e8ee;--muted:#9aa5b2;
--line:#2b333d;--panel:#19202a;--active:#43bd7b;--held:#f0a03c;--idle:#5a6777;--unm:#8a7fc4;
--track:#1f2731;--bad:#ff7a61;--good:#5fd08f;--link:#6aa8ff;
--q0:#15241b;--q1:#17301f;--q2:#1a3d25;--q3:#1d4b2c;--q4:#215b34;--q5:#276d3e;--q6:#2f824a;
--q7:#3b9a58;--q8:#52b56c;--q9:#74d38a}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1180px;padding:16px 20px 40px;background:var(--bg);color:var(--fg);
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
h1{font-size:1.45em;margin:.2em 0}h2{font-size:1.15em;margin:1.8em 0 .5em;padding-top:.6em;
border-top:1px solid var(--line)}h3{font-size:1em;margin:1.2em 0 .4em}
a{color:var(--link)}p{margin:.4em 0}.muted,figcaption,caption{color:var(--muted)}
.small{font-size:.86em}nav{display:flex;flex-wrap:wrap;gap:.2em .9em;font-size:.9em;margin:.6em 0}
nav a{white-space:nowrap}
.badge{display:inline-block;padding:0 .45em;border-radius:.6em;background:var(--panel);
border:1px solid var(--line);font-size:.8em;vertical-align:middle}
.notes{border-left:4px solid var(--held);background:var(--panel);padding:.4em .8em .4em 1.8em;margin:.6em 0}
.notes li{margin:.2em 0}
.kpis{display:flex;flex-wrap:wrap;gap:10px;margin:.8em 0}
.kpi{flex:1 1 150px;background:var(--panel);border:1px solid var(--line);border-radius:8px;
padding:.5em .8em}.kpi b{display:block;font-size:1.5em;font-variant-numeric:tabular-nums}
.kpi .sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.35em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4em 0;font-size:.92em}
th,td{padding:.22em .6em;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.sum td{font-weight:600;border-top:2px solid var(--line)}
caption{text-align:left;font-size:.9em;padding:.2em 0}
figure{margin:.6em 0}svg{display:block;max-width:100%}svg text{fill:var(--fg);font-size:11px}
.a{fill:var(--active)}.h{fill:var(--held)}.t{fill:var(--idle)}.u{fill:var(--unm)}
.k{fill:var(--track)}.nd{fill:transparent;stroke:var(--line);stroke-dasharray:3 2}
.heat{max-width:760px}
.sw.a{background:var(--active)}.sw.h{background:var(--held)}.sw.t{background:var(--idle)}
.sw.u{background:var(--unm)}.sw.k{background:var(--track);border:1px solid var(--line)}
.q0{fill:var(--q0);background:var(--q0)}.q1{fill:var(--q1);background:var(--q1)}
.q2{fill:var(--q2);background:var(--q2)}.q3{fill:var(--q3);background:var(--q3)}
.q4{fill:var(--q4);background:var(--q4)}.q5{fill:var(--q5);background:var(--q5)}
.q6{fill:var(--q6);background:var(--q6)}.q7{fill:var(--q7);background:var(--q7)}
.q8{fill:var(--q8);background:var(--q8)}.q9{fill:var(--q9);background:var(--q9)}
.legend{display:flex;flex-wrap:wrap;gap:.3em 1em;font-size:.86em;margin:.3em 0}
.legend .sw{display:inline-block;width:.9em;height:.9em;border-radius:2px;margin-right:.3em;
vertical-align:-.1em}
.scale{display:flex;align-items:center;gap:2px;font-size:.8em;margin:.4em 0}
.scale i{display:inline-block;width:24px;height:12px}.scale i.nd{border:1px dashed var(--line)}
.tl{margin:.5em 0 .9em}.tl h3{margin:.2em 0;font-size:.92em}
.tl svg{shape-rendering:crispEdges;width:100%;height:34px;border:1px solid var(--line);background:var(--track)}
.hover rect{fill:transparent}.hover rect:hover{fill:var(--fg);fill-opacity:.15}
.axis{position:relative;height:1.3em;font-size:.75em;color:var(--muted)}
.axis span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.axis span:first-child{transform:none}.axis span:last-child{transform:translateX(-100%)}
.bar{width:100%;height:30px;border-radius:4px}
.verdict{border:2px solid var(--good);border-radius:8px;padding:.6em .9em;margin:.6em 0}
.verdict.bad{border-color:var(--bad)}.verdict.open{border-color:var(--held)}
.rec{border:1px solid var(--line);border-radius:8px;padding:.5em .9em;margin:.7em 0}
.rec h3{margin:.1em 0 .3em}.rec ul{margin:.2em 0;padding-left:1.3em}
.rec .worth{color:var(--muted);font-size:.9em}code{font-size:.9em}
pre{white-space:pre-wrap;background:var(--panel);padding:.6em;border-radius:6px;font-size:.85em}
footer{margin-top:2.5em;font-size:.8em;color:var(--muted)}
svg.ib{min-width:120px}
@media (max-width:600px){body{padding:10px 10px 30px;font-size:14px}h1{font-size:1.2em}
.kpi b{font-size:1.25em}th,td{padding:.18em .35em}.axis span:nth-child(2n){display:none}
.heat text{font-size:19px}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--line:#bbb;--panel:#f4f4f4;
--active:#2c9a5c;--held:#e07c0b;--idle:#a9b5c3;--unm:#8f83c9;--track:#eceff3;--bad:#b8321c;
--good:#237a49;--link:#000;
--q0:#f1f7f2;--q1:#dcefe1;--q2:#c3e4cc;--q3:#a6d6b4;--q4:#86c59a;--q5:#65b27f;--q6:#479d66;
--q7:#2f874f;--q8:#1d6e3c;--q9:#0e552b}
@page{margin:12mm}body{max-width:none;padding:0;font-size:9.5pt}nav{display:none}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
h2{break-after:avoid}table,figure,.rec,.tl,.kpis,.verdict{break-inside:avoid}
.scroll{overflow:visible}a{text-decoration:none}}
)css";

} // namespace gua::report::html
