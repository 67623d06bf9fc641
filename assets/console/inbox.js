// The console's inbox (live hand-off): keeps an EventSource on the inbox's stream open, which is what
// makes an owner or editor "online" for the site, and shows what changes: a visible (title, live region)
// and, where the browser allows it, audible notice when a visitor starts waiting, then the page again
// (unless a reply is being written). The notice outlives that reload (sessionStorage) and stays in the
// title until the tab is looked at. No framework, no inline script: the page's CSP stays strict.
(() => {
  const status = document.getElementById('inbox-status');
  const online = document.getElementById('inbox-online');
  const title = document.title;
  const NOTICE = `sitebot-inbox-notice:${location.pathname}`;
  let baseline = null;
  const waitingIds = (data) => data.conversations.filter((c) => c.state === 'waiting').map((c) => c.conversationId);
  const writing = () => [...document.querySelectorAll('textarea')].some((t) => t.value.trim() !== '' || t === document.activeElement);
  const beep = () => {
    try {
      const ctx = new AudioContext();
      const osc = ctx.createOscillator();
      osc.frequency.value = 880;
      osc.connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + 0.15);
    } catch (_) { /* no audio without a gesture on this page: the title and the live region still tell */ }
  };
  const show = (count) => {
    document.title = `(${count}) ${title}`;
    if (status) status.textContent = status.dataset.new || '';
  };
  // Looked at: the tab is visible and has the focus for a moment; the notice has done its work.
  const seen = () => {
    if (document.visibilityState !== 'visible' || !document.hasFocus()) return;
    setTimeout(() => {
      if (document.visibilityState === 'visible' && document.hasFocus()) {
        sessionStorage.removeItem(NOTICE);
        document.title = title;
      }
    }, 5000);
  };
  // A notice from before the last reload (at most 10 minutes old).
  try {
    const kept = JSON.parse(sessionStorage.getItem(NOTICE) || 'null');
    if (kept && Date.now() - kept.at < 600000) { show(kept.count); seen(); } else sessionStorage.removeItem(NOTICE);
  } catch (_) { sessionStorage.removeItem(NOTICE); }
  document.addEventListener('visibilitychange', seen);
  window.addEventListener('focus', seen);

  const events = new EventSource(location.pathname.replace(/\/$/, '') + '/events');
  events.addEventListener('inbox', (e) => {
    const data = JSON.parse(e.data);
    if (online) online.textContent = online.textContent.replace(/\d+$/, String(data.online));
    const key = JSON.stringify(data.conversations);
    if (baseline === null) { baseline = { key, waiting: waitingIds(data) }; return; }
    if (key === baseline.key) return;
    const fresh = waitingIds(data).filter((id) => !baseline.waiting.includes(id));
    let delay = 0;
    if (fresh.length > 0) {
      const count = waitingIds(data).length;
      show(count);
      try { sessionStorage.setItem(NOTICE, JSON.stringify({ count, at: Date.now() })); } catch (_) { /* private mode: the title still tells until the reload */ }
      beep();
      delay = 400; // the beep plays before the page is shown again
    }
    if (!writing()) setTimeout(() => location.reload(), delay);
  });
})();
