// A host page on another origin than sitebot, for developing and running widget.mjs by hand.
// (The Rust end-to-end test serves its own host page; this file is only the local equivalent.)
//
//   SITEBOT_URL=https://127.0.0.1:8443 SITE_ID=<guid> [PORT=0] node serve-host.mjs
//
// Prints HOST_URL=... and HOST_URL_DE=... and serves until killed:
//   /        the page in English (<html lang="en">),   /de  the same page with lang="de",
//   /?lang=xx&dataLang=yy  any page language, and data-lang on the script tag when dataLang is given,
//   /host.css  deliberately hostile page styles (the widget must not inherit them or change the page).
// Every page sends a strict CSP: scripts and connections only to the sitebot origin, styles only 'self'.
import { createServer } from 'node:http';

const sitebot = (process.env.SITEBOT_URL || '').replace(/\/+$/, '');
const siteId = process.env.SITE_ID || '';
if (!sitebot || !siteId) {
  console.error('SITEBOT_URL and SITE_ID are required');
  process.exit(2);
}
const origin = new URL(sitebot).origin;
const csp = `default-src 'none'; script-src ${origin}; connect-src ${origin}; style-src 'self'; img-src 'self' data:`;

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (lang, dataLang) => `<!doctype html>
<html lang="${esc(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bright Smile Dental (widget host page)</title>
<link rel="stylesheet" href="/host.css">
</head>
<body>
<main>
<h1>Bright Smile Dental</h1>
<p class="lead">A host page on another origin, with its own styles and a strict Content-Security-Policy.</p>
<p><button type="button">A host page button</button> <a href="#top">A host page link</a></p>
</main>
<script src="${esc(origin)}/v1/widget.js" data-site-id="${esc(siteId)}"${dataLang ? ` data-lang="${esc(dataLang)}"` : ''} async></script>
</body>
</html>
`;
const css = `html{background:#fdf6e3}
body{font:30px/3 Georgia,serif;color:rgb(200,0,0);text-align:center;letter-spacing:2px;text-transform:uppercase;margin:40px}
*{box-sizing:content-box}
button{background:rgb(255,0,255);color:#000;border:5px dashed lime;font-size:28px;padding:20px}
input,textarea{background:#222;color:#0f0}
a{color:#060}
div{border:3px solid lime}
p{margin:0 0 60px}
`;

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const headers = { 'Content-Security-Policy': csp, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
  if (url.pathname === '/host.css') {
    res.writeHead(200, { ...headers, 'Content-Type': 'text/css; charset=utf-8' });
    return res.end(css);
  }
  if (url.pathname === '/' || url.pathname === '/de') {
    const lang = url.pathname === '/de' ? 'de' : url.searchParams.get('lang') || 'en';
    res.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8' });
    return res.end(page(lang, url.searchParams.get('dataLang')));
  }
  res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' });
  res.end('not found');
});
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  const { port } = server.address();
  console.log(`HOST_URL=http://127.0.0.1:${port}/`);
  console.log(`HOST_URL_DE=http://127.0.0.1:${port}/de`);
});
