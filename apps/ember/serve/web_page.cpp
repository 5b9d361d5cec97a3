#include "serve/web_page.h"

namespace serve {

// The conversation lives in the page (the server keeps none); every send
// posts the whole history, which the server's prefix reuse makes cheap.
// Text is inserted with textContent, never as HTML.
const char* WebPage() {
  return R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ember</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; background: #f6f6f4; color: #222; }
  main { max-width: 760px; margin: 0 auto; padding: 16px; display: flex; flex-direction: column;
         height: 100vh; box-sizing: border-box; }
  header { display: flex; gap: 8px; align-items: center; margin-bottom: 8px; }
  header h1 { font-size: 18px; margin: 0 auto 0 0; }
  header input { width: 140px; }
  #log { flex: 1; overflow-y: auto; }
  .msg { white-space: pre-wrap; padding: 8px 12px; border-radius: 8px; margin: 6px 0; }
  .user { background: #dbe8ff; margin-left: 15%; }
  .assistant { background: #fff; border: 1px solid #ddd; margin-right: 15%; }
  .error { background: #fde2e2; }
  form { display: flex; gap: 8px; margin-top: 8px; }
  textarea { flex: 1; font: inherit; padding: 8px; resize: vertical; min-height: 48px; }
  button { font: inherit; padding: 0 16px; }
</style>
</head>
<body>
<main>
  <header>
    <h1>ember</h1>
    <label>temperature <input id="temp" type="number" min="0" max="2" step="0.1" value="0.7"></label>
    <input id="key" type="password" placeholder="API key (if any)">
    <button id="clear" type="button">New chat</button>
  </header>
  <div id="log"></div>
  <form id="form">
    <textarea id="input" placeholder="Message (Enter sends, Shift+Enter for a new line)"></textarea>
    <button id="send">Send</button>
  </form>
</main>
<script>
const log = document.getElementById('log');
const input = document.getElementById('input');
const keyBox = document.getElementById('key');
keyBox.value = localStorage.getItem('ember-key') || '';
let history = [];
let controller = null;
// Links (and the browser test): /?q=TEXT[&temperature=T][&max_tokens=N] sends
// TEXT when the page opens. body[data-state] is "busy" while a reply streams.
const params = new URLSearchParams(location.search);
if (params.has('temperature')) document.getElementById('temp').value = params.get('temperature');
const maxTokens = parseInt(params.get('max_tokens') || '', 10);

function add(role, text) {
  const div = document.createElement('div');
  div.className = 'msg ' + role;
  div.textContent = text;
  log.appendChild(div);
  log.scrollTop = log.scrollHeight;
  return div;
}

async function send(text) {
  history.push({role: 'user', content: text});
  add('user', text);
  const out = add('assistant', '');
  localStorage.setItem('ember-key', keyBox.value);
  const headers = {'Content-Type': 'application/json'};
  if (keyBox.value) headers['Authorization'] = 'Bearer ' + keyBox.value;
  controller = new AbortController();
  document.body.dataset.state = 'busy';
  let reply = '';
  try {
    const res = await fetch('/v1/chat/completions', {
      method: 'POST', headers, signal: controller.signal,
      body: JSON.stringify(Object.assign(
          {messages: history, stream: true,
           temperature: parseFloat(document.getElementById('temp').value)},
          maxTokens > 0 ? {max_tokens: maxTokens} : {}))});
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      throw new Error((body.error && body.error.message) || ('HTTP ' + res.status));
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const {done, value} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true});
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!event.startsWith('data: ')) continue;  // ": ping" comments
        const data = event.slice(6);
        if (data === '[DONE]') continue;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        const delta = chunk.choices.length ? chunk.choices[0].delta : {};
        if (delta.content) {
          reply += delta.content;
          out.textContent = reply;
          log.scrollTop = log.scrollHeight;
        }
      }
    }
    history.push({role: 'assistant', content: reply});
  } catch (e) {
    out.className = 'msg error';
    out.textContent = reply + (reply ? '\n' : '') + 'Error: ' + e.message;
    history.pop();
  } finally {
    controller = null;
    document.body.dataset.state = 'idle';
  }
}

document.getElementById('form').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (!text || controller) return;
  input.value = '';
  send(text);
});
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    document.getElementById('form').requestSubmit();
  }
});
document.getElementById('clear').addEventListener('click', () => {
  if (controller) controller.abort();
  history = [];
  log.textContent = '';
});
if (params.get('q')) send(params.get('q'));
</script>
</body>
</html>
)html";
}

}  // namespace serve
