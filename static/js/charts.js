// Chart.js (its UMD build, served from /vendor/chartjs) loaded when the first chart is to be drawn, not with the
// page: it is 210 KB that nothing needs before the stage is live (bench/bench_site.py).
import { siteUrl } from "./site.js";

let loading = null;

/** window.Chart, once loaded, given to `configure` (the page's defaults) the first time; a failure is forgotten. */
export function chartLibrary(configure) {
  loading ??= new Promise((resolve, reject) => {
    if (window.Chart) { resolve(window.Chart); return; }
    const script = document.createElement("script");
    script.src = siteUrl("/vendor/chartjs/chart.umd.min.js");
    script.onload = () => resolve(window.Chart);
    script.onerror = () => { script.remove(); loading = null; reject(new Error("Chart.js could not be loaded")); };
    document.head.append(script);
  }).then((Chart) => { configure(Chart); return Chart; });
  return loading;
}
