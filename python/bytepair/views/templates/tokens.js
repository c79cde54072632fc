// The token view shared by bytepair's HTML pages (no network, no libraries).
// DATA.vocab[id] = [hex bytes, quoted display]; DATA.tree[id] = [left id, right id] for merges.
// SentencePiece pages also have DATA.marks[id] = "byte" (a byte piece: drawn with its hex) or
// "unknown" (the unknown piece: drawn with ‹unk›), DATA.notes[id] = a line of its tip, and
// DATA.surface[index] = hex of the text the unknown piece at that index of DATA.ids replaced.
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
      b = parse((vocab[id] || ["", ""])[0]);
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
  function spaced(h) {
    return h.replace(/(..)(?!$)/g, "$1 ");
  }
  function hex(vocab, id) {
    return spaced((vocab[id] || ["", ""])[0]);
  }
  function parse(h) {
    const b = new Uint8Array(h.length / 2);
    for (let i = 0; i < b.length; i++) b[i] = parseInt(h.substr(2 * i, 2), 16);
    return b;
  }
  function tip(data, id) {
    const v = data.vocab[id];
    if (!v) return "id " + id;
    const n = v[0].length / 2;
    let lines = ["id " + id + "  " + v[1]];
    if (n) lines.push("bytes " + hex(data.vocab, id) + " (" + n + (n === 1 ? " byte)" : " bytes)"));
    const parts = data.tree[id];
    const note = data.notes && data.notes[id];
    if (data.special && data.special.includes(id)) lines.push("a special token");
    else if (note) lines.push(note);
    else if (parts) {
      const l = data.vocab[parts[0]], r = data.vocab[parts[1]];
      lines.push("merged: " + (l ? l[1] : parts[0]) + " + " + (r ? r[1] : parts[1]) + " -> " + v[1] +
                 "  (ids " + parts[0] + " + " + parts[1] + ")");
    } else if (n === 1) lines.push("a single byte");
    return lines.join("\n");
  }
  // surface: DATA.surface, for the ids it was made for (the bytes of the tokens at those indices)
  function segments(data, ids, surface) {
    const at = k => (surface && surface[k] !== undefined) ? parse(surface[k]) : bytesOf(data.vocab, ids[k]);
    const segs = [];
    let i = 0;
    while (i < ids.length) {
      let done = false;
      for (let k = 1; k <= MAX_GROUP && i + k <= ids.length; k++) {
        const parts = [];
        for (let j = i; j < i + k; j++) parts.push(at(j));
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
  function render(container, data, ids, showIds, surface) {
    const marks = data.marks || {};
    const frag = document.createDocumentFragment();
    for (const seg of segments(data, ids, surface)) {
      const fallback = seg.ids.some(id => marks[id] === "byte");
      const unknown = seg.ids.some(id => marks[id] === "unknown");
      const split = seg.ids.length > 1 || seg.text === null || fallback;
      const span = document.createElement("span");
      span.className = "tok" + (split ? " multi" : "") + (unknown ? " unk" : "");
      span.style.background = colour(seg.ids[0]);
      let shown = seg.text === null ? "" : visible(seg.text);
      // marks go before a newline's line break, as in the terminal view (↵‹0a›[13], then the break)
      const brk = shown.endsWith("\n") ? "\n" : "";
      if (brk) shown = shown.slice(0, -1);
      if (split) shown += "\u2039" + seg.ids.map(id => hex(data.vocab, id)).join("|") + "\u203a";
      if (unknown) shown += "\u2039unk\u203a";
      if (showIds) shown += "[" + seg.ids.join("+") + "]";
      span.textContent = shown + brk;
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
