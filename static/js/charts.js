// Chart.js (its UMD build, served from /vendor/chartjs) loaded when the first chart is to be drawn, not with the
// page: it is 210 KB that nothing needs before the stage is live (bench/bench_site.py); set up once with the
// page's defaults.
import { formatNumber } from "./format.js";
import { siteUrl } from "./site.js";

// An axis tick or a tooltip's value: whole numbers with thin-space thousands, others to 3 significant digits.
const tick = (v) => (Number.isInteger(v) ? formatNumber(v, "int") : formatNumber(v, "sig3"));

function setDefaults(Chart, ink) {
  Chart.defaults.animation = false;
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
  Chart.defaults.font.size = 12;
  Chart.defaults.color = ink;
  Chart.defaults.maintainAspectRatio = false;
  // Chart.js would print numbers with the browser's locale (1,024); the page's formats instead.
  Chart.defaults.scales.linear.ticks.callback = tick;
  Chart.defaults.scales.logarithmic.ticks.callback = tick;
  Chart.defaults.plugins.tooltip.callbacks.label = (item) => {
    const value = item.chart.options.indexAxis === "y" ? item.parsed.x : item.parsed.y;
    return `${item.dataset.label ? `${item.dataset.label}: ` : ""}${tick(value)}`;
  };
}

let loading = null;

/** window.Chart, loaded once and set up with the page's defaults (text in `ink`); a failed load is forgotten. */
export function chartLibrary(ink) {
  loading ??= new Promise((resolve, reject) => {
    if (window.Chart) {
      resolve(window.Chart);
      return;
    }
    const script = document.createElement("script");
    script.src = siteUrl("/vendor/chartjs/chart.umd.min.js");
    script.onload = () => resolve(window.Chart);
    script.onerror = () => {
      script.remove();
      loading = null;
      reject(new Error("Chart.js could not be loaded"));
    };
    document.head.append(script);
  }).then((Chart) => {
    setDefaults(Chart, ink);
    return Chart;
  });
  return loading;
}
