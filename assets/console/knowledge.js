// #25 knowledge: a crawl's live progress on the websites page. While a crawl of one of the site's
// sources runs, polls the sources' state once a second and shows each running crawl's pages; when the
// last one ends, loads the page again so its new state (last sync, pages, errors) shows. The page works
// without it: a reload shows the same state.
(() => {
  const list = document.getElementById('sources');
  const status = document.getElementById('crawl-status');
  if (!list || list.dataset.running !== 'true' || !window.fetch) return;
  const tick = async () => {
    let data;
    try {
      const resp = await fetch(list.dataset.progress, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
      if (!resp.ok) throw new Error(String(resp.status));
      data = await resp.json();
    } catch (_) {
      setTimeout(tick, 3000);
      return;
    }
    if (!data.running) {
      location.replace(location.pathname);
      return;
    }
    for (const s of data.sources) {
      const card = [...list.querySelectorAll('.source')].find((c) => c.dataset.url === s.url);
      const text = card && card.querySelector('.crawl-text');
      if (text && s.running && text.textContent !== s.running) {
        text.textContent = s.running;
        if (status) status.textContent = s.running;
      }
    }
    setTimeout(tick, 1000);
  };
  setTimeout(tick, 1000);
})();
