//! A connection whose writes must keep moving: a client that stops reading its responses
//! (so that the server's writes wait on a full socket buffer) loses its connection after
//! [`WRITE_STALL`] instead of holding one of the server's connection slots for ever. Reads
//! are left as they are: the header and body time limits bound them.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// How long a write may wait for the client to make room.
pub(super) const WRITE_STALL: Duration = Duration::from_secs(10);

/// `inner` with a limit on how long a write may wait.
pub(super) struct TimedIo<T> {
    inner: T,
    stall: Duration,
    /// Armed while a write waits; cleared by any write that goes through.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<T> TimedIo<T> {
    pub(super) fn new(inner: T, stall: Duration) -> Self {
        TimedIo {
            inner,
            stall,
            deadline: None,
        }
    }

    /// What a write that could not go through returns: wait on, or fail once the stall
    /// has lasted too long.
    fn waited<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let stall = self.stall;
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client stopped reading its responses",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Passes on a write's outcome, disarming the limit when it went through.
    fn went<R>(&mut self, done: Poll<io::Result<R>>, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        match done {
            Poll::Ready(r) => {
                self.deadline = None;
                Poll::Ready(r)
            }
            Poll::Pending => self.waited(cx),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for TimedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TimedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let done = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.went(done, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let done = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.went(done, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let done = Pin::new(&mut this.inner).poll_flush(cx);
        this.went(done, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let done = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.went(done, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that never has room.
    struct Full;

    impl AsyncWrite for Full {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Pending
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[test]
    fn a_write_that_never_gets_room_fails_after_the_stall() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut io = TimedIo::new(Full, Duration::from_millis(50));
            let started = std::time::Instant::now();
            let err = std::future::poll_fn(|cx| Pin::new(&mut io).poll_write(cx, b"answer"))
                .await
                .unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::TimedOut);
            assert!(started.elapsed() >= Duration::from_millis(50));
            // Positive control: a writer with room is not cut.
            let mut sink = TimedIo::new(Vec::new(), Duration::from_millis(50));
            let n = std::future::poll_fn(|cx| Pin::new(&mut sink).poll_write(cx, b"answer"))
                .await
                .unwrap();
            assert_eq!(n, 6);
            assert_eq!(sink.inner, b"answer");
        });
    }
}
