// The embed script: <script src="https://<api>/widget.js" data-widget-id="<id>" async></script>
// Adds a floating button (the widget's label, color and corner) that opens the widget's page in an iframe,
// which may use the microphone. The page's own frame-ancestors decides which sites may show it.
// Styles are set through the DOM (no style sheet), so a site's Content-Security-Policy for styles does not stop it.
(() => {
  const script = document.currentScript;
  const widgetId = script?.dataset.widgetId;
  if (!widgetId) {
    console.warn('widget.js: the script tag needs data-widget-id');
    return;
  }
  const apiOrigin = new URL(script.src, location.href).origin;

  function style(element, properties) {
    for (const [name, value] of Object.entries(properties)) element.style.setProperty(name, value);
    return element;
  }

  function mount(launcher) {
    const { config, page_url: pageUrl } = launcher;
    const side = config.position === 'bottom-left' ? 'left' : 'right';
    const root = document.createElement('div');
    root.dataset.voiceWidget = widgetId;

    const button = style(document.createElement('button'), {
      position: 'fixed',
      bottom: '20px',
      [side]: '20px',
      'z-index': '2147483000',
      padding: '12px 20px',
      border: '0',
      'border-radius': '999px',
      background: config.theme_color,
      color: '#fff',
      font: '600 15px/1.2 system-ui, -apple-system, "Segoe UI", sans-serif',
      'box-shadow': '0 4px 14px rgba(0, 0, 0, .2)',
      cursor: 'pointer',
    });
    button.type = 'button';
    button.textContent = config.button_label;
    button.setAttribute('aria-expanded', 'false');

    let frame = null;
    button.addEventListener('click', () => {
      if (!frame) {
        frame = style(document.createElement('iframe'), {
          position: 'fixed',
          bottom: '76px',
          [side]: '20px',
          'z-index': '2147483000',
          width: 'min(360px, calc(100vw - 40px))',
          height: 'min(520px, calc(100vh - 100px))',
          border: '1px solid #d9e2ec',
          'border-radius': '16px',
          background: '#fff',
          'box-shadow': '0 8px 30px rgba(0, 0, 0, .18)',
        });
        frame.src = pageUrl;
        frame.title = config.title || 'Voice assistant';
        frame.allow = 'microphone; autoplay';
        root.append(frame);
        button.setAttribute('aria-expanded', 'true');
        return;
      }
      // Hiding keeps the conversation going; the page's own button hangs up.
      const open = frame.style.display === 'none';
      frame.style.display = open ? '' : 'none';
      button.setAttribute('aria-expanded', String(open));
    });

    root.append(button);
    document.body.append(root);
  }

  fetch(`${apiOrigin}/widgets/${encodeURIComponent(widgetId)}/config`)
    .then((res) => (res.ok ? res.json() : Promise.reject(new Error(`the widget answered ${res.status}`))))
    .then((launcher) => {
      if (document.body) mount(launcher);
      else document.addEventListener('DOMContentLoaded', () => mount(launcher));
    })
    .catch((error) => console.warn(`widget.js: the widget is not available on this site (${error.message})`));
})();
