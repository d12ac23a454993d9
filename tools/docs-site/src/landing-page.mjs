// The site's front page: the API reference and one entry per public package.

/** @param {string} text */
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * @typedef {object} PackageEntry
 * @property {string} name
 * @property {string} version
 * @property {string} description
 * @property {string | undefined} href the package's docs, relative to the site root
 * @property {string} docsLabel what the link leads to
 */

/**
 * The HTML of index.html. Static and self-contained: inline styles, no scripts, and a
 * policy that lets the page load nothing from anywhere else.
 * @param {{ title: string, description: string, apiReference: string, documents: { href: string, label: string }[], guides: { href: string, title: string }[], packages: PackageEntry[] }} site
 */
export function landingPage({ title, description, apiReference, documents, guides, packages }) {
  const rows = packages
    .map(
      (pkg) => `      <tr>
        <td>${pkg.href === undefined ? escapeHtml(pkg.name) : `<a href="${escapeHtml(pkg.href)}">${escapeHtml(pkg.name)}</a>`}</td>
        <td>${escapeHtml(pkg.version)}</td>
        <td>${escapeHtml(pkg.description)}</td>
        <td>${escapeHtml(pkg.docsLabel)}</td>
      </tr>`,
    )
    .join("\n");
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'" />
  <link rel="icon" href="data:," />
  <title>${escapeHtml(title)}</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1f2328; background: #fff; }
    main { max-width: 60rem; margin: 0 auto; padding: 2rem 1.5rem; }
    h1 { margin-top: 0; }
    table { border-collapse: collapse; width: 100%; }
    th, td { text-align: left; vertical-align: top; padding: .5rem .75rem; border-bottom: 1px solid #d1d9e0; }
    a { color: #0969da; }
    .api { font-size: 1.15rem; }
  </style>
</head>
<body>
  <main>
    <h1>${escapeHtml(title)}</h1>
    <p>${escapeHtml(description)}</p>
    <h2>HTTP API</h2>
    <p class="api"><a href="${escapeHtml(apiReference)}">API reference</a>: every operation, schema and error code of the service, from the bundled OpenAPI 3.1 document.</p>
    <p>The document itself: ${documents.map((doc) => `<a href="${escapeHtml(doc.href)}">${escapeHtml(doc.label)}</a>`).join(" and ")}.</p>
    <h2>Guides</h2>
    <ul>
${guides.map((guide) => `      <li><a href="${escapeHtml(guide.href)}">${escapeHtml(guide.title)}</a></li>`).join("\n")}
    </ul>
    <h2>Packages</h2>
    <table>
      <thead><tr><th>Package</th><th>Version</th><th>What it is</th><th>Docs</th></tr></thead>
      <tbody>
${rows}
      </tbody>
    </table>
  </main>
</body>
</html>
`;
}
