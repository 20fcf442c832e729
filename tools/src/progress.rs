//! Progress of the tools' long runs (`replay`, `merge`, `memdiff`) on standard error, drawn
//! by `indicatif`: a spinner with the stage (a file, a collection and its side), the methods
//! done so far and their rate. Shown only when standard error is a terminal and the run asked
//! for it, so that piped or redirected output, logs of CI runs and `--quiet` runs hold none.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

/// A progress line on standard error, or nothing (see [`Progress::hidden`]). Cheap to clone:
/// clones draw the same line.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// No progress at all: every method is a no-op.
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    /// Progress of the run `what` (`replay`, `merge`, `memdiff`): drawn only when `enabled` and
    /// standard error is a terminal, hidden otherwise.
    pub fn new(enabled: bool, what: &str) -> Progress {
        Progress::on(enabled && std::io::stderr().is_terminal(), what)
    }

    /// Progress drawn on standard error when `shown`, whatever it is connected to (for
    /// [`Progress::new`], and for tests of the drawing).
    pub fn on(shown: bool, what: &str) -> Progress {
        if !shown {
            return Progress::hidden();
        }
        let style = ProgressStyle::with_template(
            "{spinner} {prefix}: {msg} {human_pos} methods ({rate}/s), {elapsed}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}", indicatif::HumanCount(state.per_sec() as u64));
            },
        );
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(5))
            .with_style(style)
            .with_prefix(what.to_string())
            // A run that fails clears its line too, before its error is printed.
            .with_finish(ProgressFinish::AndClear);
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar) }
    }

    /// Whether anything is drawn.
    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// The name shown first (at first the run's: `what` of [`Progress::new`]).
    pub fn set_prefix(&self, prefix: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.set_prefix(prefix.into());
        }
    }

    /// The stage shown before the count (e.g. `file 2/9`, `libraries.pmi (1/3), diff side`).
    pub fn set_stage(&self, stage: impl Into<String>) {
        if let Some(bar) = &self.bar {
            let mut stage: String = stage.into();
            if !stage.is_empty() {
                stage.push(':');
            }
            bar.set_message(stage);
        }
    }

    /// Counts `methods` more methods done.
    #[inline]
    pub fn add(&self, methods: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(methods);
        }
    }

    /// Removes the line (the command then prints its own summary).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
