//! The test servers' listener: connections a handler can drop without answering, and an outage
//! switch that stops listening (new connections are refused, open ones are cut) and comes back on
//! the same address, as a service behind a failing network does.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Per-connection switch a handler flips to make the connection fail instead of answering.
#[derive(Clone, Debug, Default)]
pub struct KillSwitch(Arc<AtomicBool>);

impl KillSwitch {
    /// The connection fails at its next read or write: the client gets no answer.
    pub fn kill(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A server's outage switch (cheap to clone, usable from any task).
#[derive(Clone, Debug)]
pub struct Outage {
    state: Arc<OutageState>,
}

#[derive(Debug)]
struct OutageState {
    down: watch::Sender<bool>,
    /// Open connections by id: their sockets are shut down when an outage starts.
    conns: Mutex<HashMap<u64, RawSock>>,
    seq: AtomicU64,
    outages: AtomicU64,
}

impl Default for Outage {
    fn default() -> Self {
        Self {
            state: Arc::new(OutageState {
                down: watch::channel(false).0,
                conns: Mutex::new(HashMap::new()),
                seq: AtomicU64::new(0),
                outages: AtomicU64::new(0),
            }),
        }
    }
}

/// A connection's socket as the platform names it (a descriptor on Unix, a SOCKET on Windows).
#[cfg(unix)]
type RawSock = std::os::fd::RawFd;
#[cfg(windows)]
type RawSock = std::os::windows::io::RawSocket;

fn raw_sock(s: &TcpStream) -> RawSock {
    #[cfg(unix)]
    return std::os::fd::AsRawFd::as_raw_fd(s);
    #[cfg(windows)]
    return std::os::windows::io::AsRawSocket::as_raw_socket(s);
}

/// Shuts both directions of `sock` down without closing it (its owner still does).
///
/// # Safety
/// `sock` is open for the whole call.
unsafe fn shut_down(sock: RawSock) {
    #[cfg(unix)]
    let s = std::os::fd::FromRawFd::from_raw_fd(sock);
    #[cfg(windows)]
    let s = std::os::windows::io::FromRawSocket::from_raw_socket(sock);
    // Borrowed, never dropped here: dropping would close the owner's socket.
    let s: std::mem::ManuallyDrop<std::net::TcpStream> = std::mem::ManuallyDrop::new(s);
    let _ = s.shutdown(std::net::Shutdown::Both);
}

impl Outage {
    /// Stops listening now: connection attempts are refused and every open connection is cut.
    pub fn stop(&self) {
        self.state.outages.fetch_add(1, Ordering::SeqCst);
        self.state.down.send_replace(true);
        let conns = self.state.conns.lock().expect("connections poisoned");
        for sock in conns.values() {
            // SAFETY: the socket belongs to a live connection: it leaves this map (under this
            // lock) before it is closed, so it cannot have been reused.
            unsafe { shut_down(*sock) };
        }
    }

    /// Listens again on the same address.
    pub fn resume(&self) {
        self.state.down.send_replace(false);
    }

    /// Stops listening for `length`, then comes back on the same address (from a spawned task).
    pub fn stop_for(&self, length: Duration) {
        self.stop();
        let me = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(length).await;
            me.resume();
        });
    }

    /// Whether the server is down now.
    pub fn is_down(&self) -> bool {
        *self.state.down.borrow()
    }

    /// How many outages have started.
    pub fn outages(&self) -> u64 {
        self.state.outages.load(Ordering::SeqCst)
    }
}

/// A listener on one loopback address that follows its [`Outage`] switch.
pub(crate) struct SwitchedListener {
    addr: SocketAddr,
    tcp: Option<TcpListener>,
    outage: Outage,
}

impl SwitchedListener {
    /// Binds `127.0.0.1:0`.
    ///
    /// # Panics
    /// When no loopback port can be bound (a broken test machine).
    pub(crate) async fn bind(outage: Outage) -> SwitchedListener {
        let tcp = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0 for a test server");
        let addr = tcp.local_addr().expect("local address of a bound listener");
        SwitchedListener {
            addr,
            tcp: Some(tcp),
            outage,
        }
    }

    /// The address, the same across outages.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Listener for SwitchedListener {
    type Io = Conn;
    type Addr = KillSwitch;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let mut down = self.outage.state.down.subscribe();
        loop {
            if *down.borrow_and_update() {
                // Closing the socket is what makes clients see "connection refused".
                self.tcp = None;
                let _ = down.wait_for(|d| !*d).await;
                continue;
            }
            let tcp = match &self.tcp {
                Some(t) => t,
                None => match TcpListener::bind(self.addr).await {
                    Ok(t) => self.tcp.insert(t),
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
            };
            tokio::select! {
                r = tcp.accept() => match r {
                    Ok((s, _)) => {
                        if self.outage.is_down() {
                            continue;
                        }
                        let kill = KillSwitch::default();
                        return (Conn::new(s, kill.clone(), self.outage.clone()), kill);
                    }
                    // Transient (e.g. too many open files): retry shortly, as axum's own listener does.
                    Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
                },
                _ = down.changed() => {}
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(KillSwitch::default())
    }
}

impl Connected<IncomingStream<'_, SwitchedListener>> for KillSwitch {
    fn connect_info(stream: IncomingStream<'_, SwitchedListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// An accepted connection: fails every operation once its switch is flipped (so hyper drops it
/// without writing the response), and is cut when an outage starts.
pub(crate) struct Conn {
    inner: TcpStream,
    kill: KillSwitch,
    id: u64,
    outage: Outage,
}

impl Conn {
    fn new(inner: TcpStream, kill: KillSwitch, outage: Outage) -> Conn {
        let id = outage.state.seq.fetch_add(1, Ordering::SeqCst);
        outage
            .state
            .conns
            .lock()
            .expect("connections poisoned")
            .insert(id, raw_sock(&inner));
        Conn {
            inner,
            kill,
            id,
            outage,
        }
    }

    fn killed(&self) -> bool {
        self.kill.0.load(Ordering::SeqCst)
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Before the socket closes (fields drop after this), so `Outage::stop` never sees a stale fd.
        self.outage
            .state
            .conns
            .lock()
            .expect("connections poisoned")
            .remove(&self.id);
    }
}

fn reset() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionReset,
        "connection dropped by fault",
    )
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.killed() {
            return Poll::Ready(Err(reset()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.killed() {
            return Poll::Ready(Err(reset()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.killed() {
            return Poll::Ready(Err(reset()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use axum::Router;

    #[tokio::test]
    async fn an_outage_refuses_and_cuts_then_the_same_address_answers_again() {
        let outage = Outage::default();
        let l = SwitchedListener::bind(outage.clone()).await;
        let url = format!("http://{}/", l.addr());
        let app = Router::new().route("/", get(|| async { "ok" }));
        tokio::spawn(async move {
            let _ = axum::serve(l, app).await;
        });
        let c = reqwest::Client::new();
        assert_eq!(c.get(&url).send().await.unwrap().status(), 200);
        outage.stop();
        // the listener task closes its socket at its next turn
        tokio::time::sleep(Duration::from_millis(50)).await;
        // the pooled connection is cut and a new one refused
        let e = c.get(&url).send().await.unwrap_err();
        assert!(e.is_connect(), "{e:?}");
        outage.resume();
        let mut ok = false;
        for _ in 0..100 {
            if c.get(&url).send().await.is_ok() {
                ok = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(ok, "the server came back on {url}");
        assert_eq!(outage.outages(), 1);
    }
}
