// Drives a real VS Code workbench (code-server, started by run.sh) in headless Chromium and checks
// the OpenProse extension the way a person uses it. Started by run.sh, which sets:
//   CS_URL      workbench URL with the workspace folder open
//   WORKSPACE   that folder (holds demo.prose, on-save.prose and greet.prose, copied from fixtures/)
//   E2E_OUT     where screenshots and summary.json go
//   CHROMIUM    the browser executable (default /usr/bin/chromium)
// Prints one line per check and exits 1 if any failed.
//
// Lessons (from driving code-server this way):
// - Monaco renders spaces as U+00A0, and reuses line elements out of order: read lines sorted by
//   their `top`, with U+00A0 turned back into spaces.
// - Shift+Alt+F opens Chromium's File menu instead of formatting: run commands through F1.
// - The language mode reads `Plain Text` for a moment after opening: wait for it to change.
// - The terminal's text is in the DOM only with the DOM renderer (run.sh turns GPU acceleration off).
// - VS Code closes a terminal as soon as its process exits: read or screenshot it before then.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const URL_ = process.env.CS_URL;
const WORKSPACE = process.env.WORKSPACE;
const OUT = process.env.E2E_OUT || path.join(__dirname, 'artifacts');
// Waits. The first answer of the language server (diagnostics of the first file) may take long on
// a cold machine; once it has answered, every other answer gets ANSWER_MS.
const STEP_MS = Number(process.env.E2E_STEP_TIMEOUT_MS || 30000);     // one UI wait
const SERVER_MS = Number(process.env.E2E_SERVER_TIMEOUT_MS || 60000); // the server's first answer
const ANSWER_MS = Number(process.env.E2E_ANSWER_TIMEOUT_MS || 20000); // any later answer
const TOTAL_MS = Number(process.env.E2E_TOTAL_TIMEOUT_MS || 480000);  // the whole run
const LANGUAGE = /open\s*prose|^\s*prose\s*$/i;

const results = [];
const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1);
function log(msg) { process.stdout.write(`[driver ${secs()}s] ${msg}\n`); }

async function main() {
  setTimeout(() => {
    log(`FAIL driver: the whole run took longer than ${TOTAL_MS} ms`);
    results.push({ name: 'driver', ok: false, detail: `timed out after ${TOTAL_MS} ms` });
    finish();
  }, TOTAL_MS).unref();
  if (!URL_ || !WORKSPACE) throw new Error('CS_URL and WORKSPACE must be set (run through run.sh)');
  fs.mkdirSync(OUT, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'prose-e2e-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 900 },
    // playwright adds its own --headless; listed here too so the command line says what it is.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  page.setDefaultTimeout(STEP_MS);
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  let shot = 0;
  const screenshot = async (name) => {
    const file = path.join(OUT, `${String(++shot).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file }).catch(() => {});
    return file;
  };

  // Runs one check: fn returns a detail string or throws. A failure takes a screenshot and
  // presses Escape so the next check starts from a clean workbench.
  async function check(name, fn) {
    const started = Date.now();
    try {
      const detail = await fn();
      const file = await screenshot(name);
      results.push({ name, ok: true, detail, screenshot: file, ms: Date.now() - started });
      log(`PASS ${name}: ${detail}`);
    } catch (err) {
      const file = await screenshot(`${name}-FAILED`);
      // The first line of the error, without playwright's colour codes and call log.
      const detail = String(err && err.message || err).replace(/\x1b\[[0-9;]*m/g, '').split(/\n|\s+Call log:/)[0].trim();
      results.push({ name, ok: false, detail, screenshot: file, ms: Date.now() - started });
      log(`FAIL ${name}: ${detail}`);
      await page.keyboard.press('Escape').catch(() => {});
    }
  }

  const editor = () => page.locator('.editor-instance .monaco-editor').first();

  // The active editor's visible lines, in document order, with real spaces.
  async function lines() {
    return editor().evaluate((ed) => [...ed.querySelectorAll('.view-lines .view-line')]
      .map((el) => ({ top: parseFloat(el.style.top) || 0, text: el.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top).map((l) => l.text));
  }

  // Screen box of `word` on the first visible line matching `lineRe` (a DOM Range over the
  // characters, so proportional fonts and token splits do not matter).
  async function wordBox(lineRe, word) {
    const box = await editor().evaluate((ed, [src, flags, w]) => {
      const re = new RegExp(src, flags);
      for (const el of ed.querySelectorAll('.view-lines .view-line')) {
        const text = el.textContent.replace(/\u00a0/g, ' ');
        if (!re.test(text)) continue;
        const at = text.indexOf(w);
        if (at < 0) continue;
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        let offset = 0; const range = document.createRange(); let started = false;
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const len = n.data.length;
          if (!started && at < offset + len) { range.setStart(n, at - offset); started = true; }
          if (started && at + w.length <= offset + len) { range.setEnd(n, at + w.length - offset); break; }
          offset += len;
        }
        const r = range.getBoundingClientRect();
        return { x: r.x, y: r.y, w: r.width, h: r.height };
      }
      return null;
    }, [lineRe.source, lineRe.flags, word]);
    if (!box) throw new Error(`no visible line matching ${lineRe} contains ${JSON.stringify(word)}`);
    return box;
  }

  // Computed colour of the rendered token span holding `word` on a line matching `lineRe`.
  async function tokenColor(lineRe, word) {
    const found = await editor().evaluate((ed, [src, flags, w]) => {
      const re = new RegExp(src, flags);
      for (const el of ed.querySelectorAll('.view-lines .view-line')) {
        if (!re.test(el.textContent.replace(/\u00a0/g, ' '))) continue;
        for (const span of el.querySelectorAll('span > span')) {
          if (span.textContent.replace(/\u00a0/g, ' ').includes(w)) {
            return { color: getComputedStyle(span).color, cls: span.className, text: span.textContent };
          }
        }
      }
      return null;
    }, [lineRe.source, lineRe.flags, word]);
    if (!found) throw new Error(`no token span containing ${JSON.stringify(word)} on a line matching ${lineRe}`);
    return found;
  }

  async function waitFor(what, fn, timeout = STEP_MS, every = 200) {
    const end = Date.now() + timeout;
    let last;
    for (;;) {
      try { last = await fn(); if (last) return last; } catch (e) { last = e; }
      if (process.env.E2E_DEBUG) log(`  waiting for ${what}: ${last instanceof Error ? last.message.split('\n')[0] : last}`);
      if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
      await page.waitForTimeout(every);
    }
  }

  async function runCommand(title) {
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget input').first().waitFor();
    await page.keyboard.type(title, { delay: 5 });
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').first().waitFor({ state: 'hidden' }).catch(() => {});
  }

  async function openFile(name) {
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').first().waitFor();
    await page.keyboard.type(name, { delay: 10 });
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: name }).first().waitFor();
    await editor().locator('.view-line').first().waitFor();
  }

  // Errors counted by the status bar (all problem markers of the workspace, from every source).
  async function statusErrors() {
    const item = page.locator('#status\\.problems').first();
    const label = (await item.getAttribute('aria-label')) || (await item.innerText());
    const m = /(\d+)\s*error/i.exec(label) || /^\D*(\d+)/.exec(await item.innerText());
    if (!m) throw new Error(`cannot read the error count from the status bar ("${label}")`);
    return Number(m[1]);
  }

  async function hoverText(lineRe, word) {
    const hover = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: /\S/ }).first();
    await page.mouse.move(700, 880);
    await page.waitForTimeout(150);
    const b = await wordBox(lineRe, word);
    await page.mouse.move(b.x + b.w / 2, b.y + b.h / 2, { steps: 3 });
    await hover.waitFor({ timeout: 5000 });
    await page.waitForTimeout(300);   // all hover parts (problems, then the server's answer)
    return (await hover.innerText()).replace(/\s+/g, ' ').trim();
  }

  async function languageMode() {
    return (await page.locator('#status\\.editor\\.mode').first().innerText()).trim();
  }

  const fixed = /^ {2}prompt: "Summarize the latest findings"$/;   // the badly indented line, formatted
  const bad = /^ {6}prompt: "Summarize the latest findings"$/;

  // ---- open the workbench -------------------------------------------------------------------
  log(`open ${URL_}`);
  await page.goto(URL_, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'demo.prose' }).first()
    .waitFor({ timeout: 60000 }).catch(() => {});
  await openFile('demo.prose');

  await check('language-mode', async () => {
    const mode = await waitFor('the status bar language mode to read OpenProse/prose', async () => {
      const m = await languageMode();
      return LANGUAGE.test(m) && m;
    }, SERVER_MS);
    return `status bar language mode is "${mode}"`;
  });

  await check('syntax-colours', async () => {
    // Wait for tokenization (the first spans appear before the grammar is loaded).
    return waitFor('a keyword and a string to be coloured differently', async () => {
      const kw = await tokenColor(/^agent researcher:/, 'agent');
      const str = await tokenColor(/^ {2}prompt: "You research/, 'You research');
      const plain = await tokenColor(/^agent researcher:/, 'researcher');
      if (kw.color === str.color) throw new Error(`keyword \`agent\` and the string are both ${kw.color}`);
      return `keyword \`agent\` ${kw.color} (${kw.cls}), string ${str.color} (${str.cls}), name \`researcher\` ${plain.color} (${plain.cls})`;
    }, STEP_MS);
  });

  await check('error-squiggle', async () => {
    await editor().locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: SERVER_MS });
    // The squiggle must sit under `writer` (the undefined agent), not somewhere else.
    const target = await wordBox(/^session: writer/, 'writer');
    const boxes = await editor().locator('.squiggly-error').evaluateAll((els) => els.map((e) => {
      const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height };
    }));
    const under = boxes.filter((b) => b.y < target.y + target.h + 4 && b.y + b.h > target.y - 4
      && b.x < target.x + target.w && b.x + b.w > target.x);
    if (!under.length) throw new Error(`${boxes.length} error squiggle(s), none under \`writer\``);
    // The Problems panel lists the server's message.
    await runCommand('View: Focus Problems');
    const rows = page.locator('.markers-panel .monaco-list-row');
    await rows.filter({ hasText: /writer/ }).first().waitFor();
    // Let late publications arrive (pushed and pulled diagnostics), then read every row.
    await page.waitForTimeout(Number(process.env.E2E_SETTLE_MS || 3000));
    const texts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    const problems = texts.filter((t) => !/^demo\.prose\b/.test(t));
    log(`  Problems panel: ${JSON.stringify(texts)}`);
    const dupes = problems.filter((t, i) => problems.indexOf(t) !== i);
    if (dupes.length) throw new Error(`the Problems panel lists the same diagnostic more than once: ${JSON.stringify(problems)}`);
    return `${boxes.length} error squiggle(s), one under \`writer\`; Problems: ${JSON.stringify(problems)}`;
  });
  await check('diagnostics-once', async () => {
    // The undefined agent is one problem: the status bar must count one error, and the hover
    // over `writer` must show the message once (a server that both pushes and answers pulls
    // shows it twice, and the pushed copy never goes away).
    await page.waitForTimeout(Number(process.env.E2E_SETTLE_MS || 3000));
    const errors = await statusErrors();
    const text = await hoverText(/^session: writer/, 'writer');
    await page.mouse.move(700, 880);
    const copies = text.split('agent `writer` is not defined').length - 1;
    if (errors !== 1 || copies !== 1) {
      throw new Error(`the status bar counts ${errors} error(s) and the hover over \`writer\` shows the message ${copies} time(s), for 1 problem; hover: "${text.slice(0, 200)}"`);
    }
    return 'status bar counts 1 error; the hover over `writer` shows the message once';
  });
  await page.mouse.move(700, 880);

  // Back to the editor, panel closed so hovers and completions have room.
  await runCommand('View: Hide Panel').catch((e) => log(`could not hide the panel: ${e.message.split('\n')[0]}`));

  await check('hover-agent-model', async () => {
    const text = await waitFor('a hover on `researcher` naming its model', async () => {
      const t = await hoverText(/^session: researcher/, 'researcher');
      if (!/sonnet/i.test(t)) throw new Error(`hover says "${t.slice(0, 200)}"`);
      return t;
    }, ANSWER_MS, 500);
    return `hover over \`researcher\`: "${text.slice(0, 160)}"`;
  });
  await page.mouse.move(700, 880);

  await check('completion-agent', async () => {
    // The fixture ends with a newline: Ctrl+End lands on the empty last line, column 1, where
    // a new top-level `session: ` is typed.
    const last = await wordBox(/^ {2}prompt: "Write it up"/, 'Write it up');
    await page.mouse.click(last.x + last.w + 20, last.y + last.h / 2);
    await page.keyboard.press('Control+End');
    const at = async () => (await page.locator('#status\\.editor\\.selection').first().innerText()).trim();
    // (the status bar follows the cursor a moment later)
    await waitFor('the cursor on the empty last line (Ln 12, Col 1)', async () => /Ln 12, Col 1\b/.test(await at()), 5000);
    await page.keyboard.type('session: ', { delay: 30 });
    const rows = page.locator('.editor-widget.suggest-widget.visible .monaco-list-row');
    const labels = await waitFor('the completion list to offer `researcher`', async () => {
      if (!(await rows.count())) {
        await page.keyboard.press('Control+Space');
        await rows.first().waitFor({ timeout: 5000 });
      }
      const all = (await rows.allInnerTexts()).map((s) => s.split('\n')[0].trim());
      if (!all.includes('researcher')) throw new Error(`offered: ${all.join(', ')}`);
      return all;
    }, ANSWER_MS, 500);
    return `after "session: " the list offers: ${labels.join(', ')}`;
  });
  await page.keyboard.press('Escape');
  // Drop the typed line: revert to the file on disk.
  await runCommand('File: Revert File');
  await waitFor('the editor to show the file as on disk again', async () =>
    (await lines()).join('\n').trimEnd() === fs.readFileSync(path.join(WORKSPACE, 'demo.prose'), 'utf8').trimEnd());

  await check('diagnostics-clear-on-fix', async () => {
    // Fix the problem by typing: `writer` -> `researcher`. The squiggle and the error count go.
    await editor().locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: ANSWER_MS });
    const b = await wordBox(/^session: writer/, 'writer');
    await page.mouse.dblclick(b.x + b.w / 2, b.y + b.h / 2);
    await page.keyboard.type('researcher', { delay: 20 });
    await waitFor('the error squiggles to go', async () => (await editor().locator('.squiggly-error').count()) === 0, ANSWER_MS)
      .catch(async (e) => {
        const left = await lines();
        throw new Error(`${e.message}: ${await editor().locator('.squiggly-error').count()} squiggle(s) and ${await statusErrors()} error(s) in the status bar remain after the fix, line 10 now reads "${left[9]}"`);
      });
    const errors = await waitFor('the status bar to count no errors', async () => (await statusErrors()) === 0 || String(await statusErrors()), 5000)
      .catch(async () => { throw new Error(`no squiggle left, but the status bar still counts ${await statusErrors()} error(s) after the fix`); });
    void errors;
    return 'after typing `researcher` over `writer`: no squiggle, status bar counts 0 errors';
  });
  await page.keyboard.press('Escape');
  await runCommand('File: Revert File');
  await waitFor('the editor to show the file as on disk again', async () =>
    (await lines()).join('\n').trimEnd() === fs.readFileSync(path.join(WORKSPACE, 'demo.prose'), 'utf8').trimEnd());

  await check('format-document', async () => {
    const before = await lines();
    if (!before.some((l) => bad.test(l))) throw new Error('the badly indented line is not in the editor to begin with');
    await editor().locator('.view-line').first().click();
    await runCommand('Format Document');
    const after = await waitFor('Format Document to fix the indentation', async () => {
      const l = await lines();
      return l.some((x) => fixed.test(x)) && l;
    }, ANSWER_MS);
    const changed = after.filter((l, i) => l !== before[i]).length;
    return `\`prompt: "Summarize..."\` now indented by 2 spaces (${changed} line(s) changed; not saved)`;
  });
  // Leave demo.prose unsaved-but-formatted; close it without saving.
  await runCommand('File: Revert File').catch(() => {});

  await check('format-on-save', async () => {
    const file = path.join(WORKSPACE, 'on-save.prose');
    const onDisk = () => fs.readFileSync(file, 'utf8');
    if (!onDisk().split('\n').some((l) => bad.test(l))) throw new Error('on-save.prose is not badly indented to begin with');
    await openFile('on-save.prose');
    await waitFor('the language mode of on-save.prose', async () => LANGUAGE.test(await languageMode()), ANSWER_MS);
    // Formatting on save needs a running server: wait for its diagnostics first.
    await editor().locator('.squiggly-error').first().waitFor({ state: 'attached', timeout: ANSWER_MS });
    await editor().locator('.view-line').first().click();
    await page.keyboard.press('Control+S');
    await waitFor('on-save.prose to be saved formatted', async () => onDisk().split('\n').some((l) => fixed.test(l)), ANSWER_MS);
    const shown = await waitFor('the editor to show the formatted text', async () => {
      const l = await lines();
      return l.some((x) => fixed.test(x)) && l;
    });
    const dirty = await page.locator('.tab.active.dirty').count();
    if (dirty) throw new Error('the saved file is formatted but the tab is still dirty');
    return `Ctrl+S wrote on-save.prose with \`prompt: "Summarize..."\` indented by 2 spaces (${shown.length} lines shown, tab clean)`;
  });

  await check('run-program', async () => {
    // The server's lens runs the extension's Run Program command, which starts
    // `python -P -m openprose run greet.prose` in a terminal (offline backend: no model called).
    const runs = path.join(WORKSPACE, '.prose', 'runs');
    const states = () => (fs.existsSync(runs) ? fs.readdirSync(runs) : [])
      .filter((d) => fs.existsSync(path.join(runs, d, 'state.md')));
    if (states().length) throw new Error(`${runs} holds runs before the check`);
    await openFile('greet.prose');
    await waitFor('the language mode of greet.prose', async () => LANGUAGE.test(await languageMode()), ANSWER_MS);
    const lens = editor().locator('.codelens-decoration a', { hasText: 'Run program' }).first();
    await lens.waitFor({ timeout: ANSWER_MS });
    const lensText = (await lens.innerText()).trim();
    await lens.click();
    // Terminal text is in the DOM because run.sh turns GPU acceleration off (DOM renderer).
    const terminalText = async () => (await page.locator('.terminal-wrapper .xterm-rows').allInnerTexts())
      .join('\n').replace(/\u00a0/g, ' ');
    const summary = await waitFor('the terminal to show `prose: run ... succeeded`', async () => {
      return /prose: run (\S+) succeeded[^\n]*/.exec(await terminalText());
    }, ANSWER_MS);
    const dirs = await waitFor('.prose/runs/*/state.md in the workspace', async () => states().length && states(), 5000);
    if (!dirs.includes(summary[1])) throw new Error(`the terminal names run ${summary[1]}, but ${runs} holds ${dirs.join(', ')}`);
    // The output must stay readable after the run: VS Code closes a terminal whose process
    // exits, so the command waits for Enter (it vanished within a second before it did).
    await page.waitForTimeout(2000);
    const after = await terminalText();
    if (!after.includes(summary[0])) throw new Error('the terminal no longer shows the summary 2 s after the run ended');
    if (!/press Enter to close this terminal/.test(after)) throw new Error('the terminal does not wait for Enter after the run');
    const tab = (await page.locator('.terminal-tabs-entry, .single-terminal-tab').allInnerTexts()).join(' ').replace(/\s+/g, ' ').trim();
    return `clicked "${lensText}"; terminal${tab ? ` "${tab}"` : ''} shows "${summary[0].trim()}"; .prose/runs/${summary[1]}/state.md exists`;
  });

  await ctx.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
  if (consoleErrors.length) {
    fs.writeFileSync(path.join(OUT, 'browser-console-errors.txt'), consoleErrors.join('\n') + '\n');
  }
}

function finish() {
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'summary.json'), JSON.stringify({ seconds: Number(secs()), results }, null, 1) + '\n');
  // playwright may keep handles open after a failure; run.sh kills the process group anyway.
  process.exit(results.length && results.every((r) => r.ok) ? 0 : 1);
}

main().catch((err) => {
  results.push({ name: 'driver', ok: false, detail: String(err && err.stack || err) });
  log(`FAIL driver: ${err && err.stack || err}`);
}).finally(finish);
