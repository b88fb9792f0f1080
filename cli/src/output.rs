//! The CLI's standard output and error. `print!` and `eprint!` panic when the other end is
//! gone; here a reader that went away (`file-tools ... | head`) only ends the output, and
//! any other failure to write the output (a full disk, `> /dev/full`) is said once on
//! stderr and fails the command.

use std::fmt::Display;
use std::io::Write as _;
use std::process::ExitCode;

/// Writes `text` to standard output. False when it could not be written for another
/// reason than a reader that went away; that reason is said on stderr.
pub(crate) fn out(text: impl Display) -> bool {
    let mut stdout = std::io::stdout().lock();
    match write!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(e) => {
            errln(format_args!("file-tools: cannot write the output: {e}"));
            false
        }
    }
}

/// [`out`] with a newline.
pub(crate) fn outln(text: impl Display) -> bool {
    out(format_args!("{text}\n"))
}

/// Writes `text` and a newline to standard error, if it can.
pub(crate) fn errln(text: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `code` when the output was written, else the exit code of a command that failed (1).
pub(crate) fn exit(written: bool, code: ExitCode) -> ExitCode {
    if written {
        code
    } else {
        ExitCode::from(1)
    }
}
