/* Draws every chart of a page from its inert JSON (<script type="application/json" class="bc-chart-data">).
   Subscribed to Material's document$, so it also runs after instant navigation; re-draws when the
   light/dark palette changes. plotly.min.js is served from this site, never from a CDN. */
(function () {
  "use strict";
  var COLORS = {
    light: ["#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#5c940d", "#e67700",
            "#364fc7", "#a61e4d", "#087f5b", "#5f3dc4", "#868e96", "#e8590c", "#1098ad", "#74b816"],
    dark: ["#74a9ff", "#ff922b", "#69db7c", "#da77f2", "#f783ac", "#3bc9db", "#a9e34b", "#ffd43b",
           "#91a7ff", "#faa2c1", "#63e6be", "#b197fc", "#ced4da", "#ffa94d", "#66d9e8", "#c0eb75"],
  };

  function css(name, fallback) {
    var value = getComputedStyle(document.body).getPropertyValue(name).trim();
    return value || fallback;
  }

  function styled(fig) {
    var dark = document.body.getAttribute("data-md-color-scheme") === "slate";
    var fg = css("--md-default-fg-color", dark ? "#e2e4e9" : "#333");
    var grid = css("--md-default-fg-color--lightest", dark ? "#444" : "#ddd");
    var layout = Object.assign({}, fig.layout, {
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      font: { color: fg, family: css("--md-text-font-family", "sans-serif") },
      colorway: dark ? COLORS.dark : COLORS.light,
      autosize: true,
      margin: { t: 48, r: 16, b: 48, l: 64 },
    });
    Object.keys(layout).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) {
        layout[key] = Object.assign({}, layout[key], { gridcolor: grid, linecolor: grid, zerolinecolor: grid });
      }
    });
    (layout.shapes || []).forEach(function (shape) { shape.line = Object.assign({}, shape.line, { color: fg }); });
    var palette = dark ? COLORS.dark : COLORS.light;
    var data = fig.data.map(function (trace) {
      if (trace.name === "ideal") {
        return Object.assign({}, trace, { line: Object.assign({}, trace.line, { color: fg }) });
      }
      var series = trace.meta && trace.meta.series;
      if (typeof series !== "number") return trace;
      // One colour per series across a section's charts, whatever traces each chart leaves out.
      var color = palette[series % palette.length];
      return Object.assign({}, trace, {
        marker: Object.assign({}, trace.marker, { color: color }),
        line: trace.type === "scatter" ? Object.assign({}, trace.line, { color: color }) : trace.line,
      });
    });
    return { data: data, layout: layout };
  }

  function draw() {
    if (typeof Plotly === "undefined") return;
    document.querySelectorAll("script.bc-chart-data").forEach(function (el) {
      var target = document.getElementById(el.getAttribute("data-target"));
      if (!target) return;
      var fig;
      try {
        fig = JSON.parse(el.textContent);
      } catch (err) {
        target.textContent = "This chart's data could not be read.";
        return;
      }
      var s = styled(fig);
      Plotly.react(target, s.data, s.layout, { displaylogo: false, responsive: true });
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(draw);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
  new MutationObserver(draw).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
})();
