//! Transports inside one process: a job of one rank, and ranks on threads joined by channels
//! (the tests' stand-in for MPI).

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;

use super::Comm;

/// A job of one rank: there is never anyone to talk to.
pub(crate) struct Single;

impl Comm for Single {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn exchange(&self, sends: &[(usize, &[u8])], recvs: &mut [(usize, &mut [u8])]) {
        // A one-rank plan has no messages (every tile is its own).
        debug_assert!(sends.is_empty() && recvs.is_empty());
    }
    fn max_i64(&self, _v: &mut [i64]) {}
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        vec![mine.to_vec()]
    }
    fn broadcast(&self, _root: usize, _data: &mut Vec<u8>) {}
}

/// One rank of a job on threads: a channel to and from every other rank. Messages between
/// two ranks arrive in the order they were sent, as MPI's do, so matching needs no tags.
pub(crate) struct Channels {
    rank: usize,
    to: Vec<Sender<Vec<u8>>>,
    from: Vec<Mutex<Receiver<Vec<u8>>>>,
}

impl Channels {
    pub(crate) fn connect(n: usize) -> Vec<Channels> {
        // links[a][b]: a sends to b.
        let mut tx: Vec<Vec<Option<Sender<Vec<u8>>>>> = (0..n).map(|_| vec![None; n]).collect();
        let mut rx: Vec<Vec<Option<Receiver<Vec<u8>>>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        for a in 0..n {
            for b in 0..n {
                let (s, r) = channel();
                tx[a][b] = Some(s);
                rx[b][a] = Some(r);
            }
        }
        tx.into_iter()
            .zip(rx)
            .enumerate()
            .map(|(rank, (to, from))| Channels {
                rank,
                to: to.into_iter().flatten().collect(),
                from: from.into_iter().flatten().map(Mutex::new).collect(),
            })
            .collect()
    }

    fn send(&self, peer: usize, bytes: Vec<u8>) {
        // A peer that has gone is noticed when we next wait for it.
        let _ = self.to[peer].send(bytes);
    }

    fn recv(&self, peer: usize) -> Vec<u8> {
        let rx = self.from[peer].lock().unwrap_or_else(|p| p.into_inner());
        match rx.recv() {
            Ok(m) => m,
            // The engine catches this and reports it as an error of this rank.
            Err(_) => panic!(
                "rank {peer} has gone: rank {} waited for a message from it",
                self.rank
            ),
        }
    }
}

impl Comm for Channels {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.to.len()
    }
    fn exchange(&self, sends: &[(usize, &[u8])], recvs: &mut [(usize, &mut [u8])]) {
        for (peer, bytes) in sends {
            self.send(*peer, bytes.to_vec());
        }
        for (peer, buf) in recvs.iter_mut() {
            let m = self.recv(*peer);
            assert_eq!(
                m.len(),
                buf.len(),
                "message from rank {peer} to rank {}",
                self.rank
            );
            buf.copy_from_slice(&m);
        }
    }
    fn max_i64(&self, v: &mut [i64]) {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        for p in (0..self.size()).filter(|&p| p != self.rank) {
            self.send(p, bytes.clone());
        }
        for p in (0..self.size()).filter(|&p| p != self.rank) {
            let m = self.recv(p);
            for (x, c) in v.iter_mut().zip(m.chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                *x = (*x).max(i64::from_le_bytes(b));
            }
        }
    }
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        for p in (0..self.size()).filter(|&p| p != self.rank) {
            self.send(p, mine.to_vec());
        }
        (0..self.size())
            .map(|p| {
                if p == self.rank {
                    mine.to_vec()
                } else {
                    self.recv(p)
                }
            })
            .collect()
    }
    fn broadcast(&self, root: usize, data: &mut Vec<u8>) {
        if self.rank == root {
            for p in (0..self.size()).filter(|&p| p != root) {
                self.send(p, data.clone());
            }
        } else {
            *data = self.recv(root);
        }
    }
}
