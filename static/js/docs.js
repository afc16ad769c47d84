// Swagger UI for /docs, from the local copy (no CDN, no inline script).
const root = document.getElementById("swagger-ui");
window.ui = window.SwaggerUIBundle({
  url: root.dataset.url,
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
