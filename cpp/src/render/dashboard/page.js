  // A core section drawn when the run has its data, else its one-line reason.
  const drawnOrWhy = (key, draw, title) => (run) => (run[key] ? draw(run) : why(section(key, title), run.why[key]));

  // --- page: the sections the command asked for, in page order ------------------------------
  const RUN_SECTIONS = {
    'summary': summarySection,
    'steps': stepsSection,
    'activation-map': mapSection,
    'model-graph': treeSection,
    'roofline': rooflineSection,
    'spread': spreadSection,
    'memory': drawnOrWhy('memory', memorySection, 'Memory per layer and per head'),
    'scaling': scalingSection,
    'heads': headsSection,
    'advice': drawnOrWhy('advice', adviceSection, 'Backend advice'),
    'ranks': drawnOrWhy('ranks', ranksSection, 'Ranks'),
    'whatif': whatifSection,
    'verification': drawnOrWhy('verification', verificationSection, 'Verified fixes'),
    'findings': findingsSection,
  };
  const app = document.getElementById('app');
  const runBox = el('div', { id: 'run' });
  const showRun = (i) => {
    const run = DATA.runs[i];
    runBox.replaceChildren();
    runBox.setAttribute('data-run', i);
    for (const id of DATA.sections) {
      if (id === 'diff') for (const s of diffSections(run)) runBox.appendChild(s);
      else if (RUN_SECTIONS[id]) runBox.appendChild(RUN_SECTIONS[id](run));
    }
  };
  if (DATA.comparison) for (const s of runsSection(DATA.comparison, showRun)) app.appendChild(s);
  app.appendChild(runBox);
  if (DATA.runs.length) showRun(0);
  else app.appendChild(el('p', { class: 'note' }, 'No report to show.'));
  window.attnprofRenderMs = performance.now() - t0;
  document.body.setAttribute('data-ready', '1');
})();
