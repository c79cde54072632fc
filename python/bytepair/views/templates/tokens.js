// The token view shared by bytepair's HTML pages (no network, no libraries).
// DATA.vocab[id] = [hex bytes, quoted display]; DATA.tree[id] = [left id, right id] for merges.
"use strict";
const BP = (() => {
  const GOLDEN = 0.6180339887498949;
  const MAX_GROUP = 8;
  const MARKS = {" ": "\u00b7", "\t": "\u2192", "\n": "\u21b5\n", "\r": "\u240d"};
  const decoder = new TextDecoder("utf-8", {fatal: true});
  const bytesCache = new Map();
  function bytesOf(vocab, id) {
    let b = bytesCache.get(id);
    if (!b) {
      const h = (vocab[id] || ["", ""])[0];
      b = new Uint8Array(h.length / 2);
      for (let i = 0; i < b.length; i++) b[i] = parseInt(h.substr(2 * i, 2), 16);
      bytesCache.set(id, b);
    }
    return b;
  }
  function colour(id) {
    const h = ((id * GOLDEN) % 1) * 360;
    return "hsl(" + h.toFixed(2) + ", 65%, 80%)";
  }
  function visible(text) {
    let out = "";
    for (const c of text) {
      if (c in MARKS) out += MARKS[c];
      else if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}]/u.test(c)) out += "\\u" + c.codePointAt(0).toString(16).padStart(4, "0");
      else out += c;
    }
    return out;
  }
  function hex(vocab, id) {
    return (vocab[id] || ["", ""])[0].replace(/(..)(?!$)/g, "$1 ");
  }
  function tip(data, id) {
    const v = data.vocab[id];
    if (!v) return "id " + id;
    const n = v[0].length / 2;
    let lines = ["id " + id + "  " + v[1], "bytes " + hex(data.vocab, id) + " (" + n + (n === 1 ? " byte)" : " bytes)")];
    const parts = data.tree[id];
    if (data.special && data.special.includes(id)) lines.push("a special token");
    else if (parts) {
      const l = data.vocab[parts[0]], r = data.vocab[parts[1]];
      lines.push("merged: " + (l ? l[1] : parts[0]) + " + " + (r ? r[1] : parts[1]) + " -> " + v[1] +
                 "  (ids " + parts[0] + " + " + parts[1] + ")");
    } else if (n === 1) lines.push("a single byte");
    return lines.join("\n");
  }
  function segments(data, ids) {
    const segs = [];
    let i = 0;
    while (i < ids.length) {
      let done = false;
      for (let k = 1; k <= MAX_GROUP && i + k <= ids.length; k++) {
        const parts = ids.slice(i, i + k).map(id => bytesOf(data.vocab, id));
        const all = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
        let o = 0;
        for (const p of parts) { all.set(p, o); o += p.length; }
        let text = null;
        try { text = decoder.decode(all); } catch (e) { text = null; }
        if (text !== null) { segs.push({ids: ids.slice(i, i + k), text: text}); i += k; done = true; break; }
      }
      if (!done) { segs.push({ids: [ids[i]], text: null}); i += 1; }
    }
    return segs;
  }
  function render(container, data, ids, showIds) {
    const frag = document.createDocumentFragment();
    for (const seg of segments(data, ids)) {
      const span = document.createElement("span");
      span.className = "tok" + (seg.ids.length > 1 || seg.text === null ? " multi" : "");
      span.style.background = colour(seg.ids[0]);
      let shown = seg.text === null ? "" : visible(seg.text);
      if (seg.ids.length > 1 || seg.text === null)
        shown += "\u2039" + seg.ids.map(id => hex(data.vocab, id)).join("|") + "\u203a";
      if (showIds) shown += "[" + seg.ids.join("+") + "]";
      span.textContent = shown;
      span.dataset.ids = seg.ids.join(" ");
      span.dataset.tip = seg.ids.map(id => tip(data, id)).join("\n\n");
      frag.appendChild(span);
    }
    container.replaceChildren(frag);
  }
  function attachTips(root, tipBox) {
    root.addEventListener("mouseover", ev => {
      const t = ev.target.closest(".tok");
      if (!t) return;
      tipBox.textContent = t.dataset.tip;
      tipBox.style.display = "block";
      const r = t.getBoundingClientRect();
      tipBox.style.left = (window.scrollX + r.left) + "px";
      tipBox.style.top = (window.scrollY + r.bottom + 4) + "px";
    });
    root.addEventListener("mouseout", ev => {
      if (ev.target.closest(".tok")) tipBox.style.display = "none";
    });
  }
  function decompose(tree, ids, size) {
    const out = [];
    for (const first of ids) {
      const stack = [first];
      while (stack.length) {
        const t = stack.pop();
        const p = tree[t];
        if (t < size || !p) out.push(t);
        else { stack.push(p[1]); stack.push(p[0]); }
      }
    }
    return out;
  }
  return {colour, visible, segments, render, attachTips, decompose, tip};
})();
