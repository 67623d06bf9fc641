// The console's inbox (live hand-off): keeps an EventSource on the inbox's stream open, which is what
// makes an owner or editor "online" for the site, and shows what changes: a visible (title, live region)
// and, where the browser allows it, audible notice when a visitor starts waiting, then the page again
// (unless a reply is being written). No framework, no inline script: the page's CSP stays strict.
(() => {
  const status = document.getElementById('inbox-status');
  const online = document.getElementById('inbox-online');
  const title = document.title;
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
  const events = new EventSource(location.pathname.replace(/\/$/, '') + '/events');
  events.addEventListener('inbox', (e) => {
    const data = JSON.parse(e.data);
    if (online) online.textContent = online.textContent.replace(/\d+$/, String(data.online));
    const key = JSON.stringify(data.conversations);
    if (baseline === null) { baseline = { key, waiting: waitingIds(data) }; return; }
    if (key === baseline.key) return;
    const fresh = waitingIds(data).filter((id) => !baseline.waiting.includes(id));
    if (fresh.length > 0) {
      document.title = `(${waitingIds(data).length}) ${title}`;
      if (status) status.textContent = status.dataset.new || '';
      beep();
    }
    if (!writing()) location.reload();
  });
})();
