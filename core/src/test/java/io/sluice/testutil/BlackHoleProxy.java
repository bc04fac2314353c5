package io.sluice.testutil;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy in front of a server that can turn into a black hole: from {@link #blackHole()} on,
 * it forwards nothing in either direction and accepts new connections without answering, but never
 * closes or resets a connection, as a host that lost power or sits behind a partition looks to its
 * peers.
 */
public final class BlackHoleProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean blackHole;
  private volatile boolean closed;

  public BlackHoleProxy(String host, int targetPort) throws IOException {
    this.target = new InetSocketAddress(host, targetPort);
    this.listener = new ServerSocket(0, 1024, java.net.InetAddress.getByName(host));
    Thread acceptor = new Thread(this::accept, "black-hole-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** From now on nothing passes and nothing is answered; connections stay open. */
  public void blackHole() {
    blackHole = true;
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        sockets.add(client);
        if (closed) {
          // accepted while close() ran, maybe after it closed the sockets: not to outlive it
          client.close();
          return;
        }
        if (blackHole) {
          continue; // held open, never read
        }
        Socket upstream;
        try {
          upstream = new Socket(target.getAddress(), target.getPort());
        } catch (IOException e) {
          client.close(); // the target is gone: so is the connection, as it would be
          continue;
        }
        sockets.add(upstream);
        if (closed) {
          client.close();
          upstream.close();
          return;
        }
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        if (closed) {
          return;
        }
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[64 << 10];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while (!blackHole && (n = in.read(buf)) >= 0) {
                  if (blackHole) {
                    break; // swallowed: the bytes never arrive
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
                while (blackHole && !closed) {
                  Thread.sleep(50); // silent, but the connection stays open
                }
              } catch (IOException | InterruptedException e) {
                // closed
              }
            },
            "black-hole-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  /** Closes everything (peers then see resets). */
  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException e) {
      // closing
    }
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException e) {
        // closing
      }
    }
  }
}
