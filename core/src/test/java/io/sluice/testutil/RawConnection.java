package io.sluice.testutil;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.Response;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * A plain socket to a server that writes frames byte by byte as a stranger would: valid, malformed,
 * truncated or slow. Not thread safe (one writer; {@link #readResponse} from one reader).
 */
public final class RawConnection implements Closeable {
  private final Socket socket;
  private final DataOutputStream out;
  private final DataInputStream in;

  public RawConnection(String host, int port) throws IOException {
    this(new Socket(host, port));
  }

  /**
   * A connection from {@code localHost} (another loopback address, such as 127.0.0.2, makes the
   * server see another peer).
   */
  public RawConnection(String host, int port, String localHost) throws IOException {
    this(new Socket(InetAddress.getByName(host), port, InetAddress.getByName(localHost), 0));
  }

  private RawConnection(Socket socket) throws IOException {
    this.socket = socket;
    socket.setTcpNoDelay(true);
    out = new DataOutputStream(socket.getOutputStream());
    in = new DataInputStream(socket.getInputStream());
  }

  /** A whole frame: {@code frameLength | type | headerLength | header | body}. */
  public static byte[] frame(byte type, byte[] header, byte[] body) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    DataOutputStream d = new DataOutputStream(b);
    try {
      d.writeInt(5 + header.length + body.length);
      d.writeByte(type);
      d.writeInt(header.length);
      d.write(header);
      d.write(body);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return b.toByteArray();
  }

  public static byte[] frame(MessageType type, MessageLite header, byte[] body) {
    return frame(type.id(), header.toByteArray(), body);
  }

  public void send(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  public OutputStream output() {
    return out;
  }

  /**
   * The next response's header (its body is skipped).
   *
   * @throws EOFException when the server closed the connection
   */
  public Response readResponse() throws IOException {
    int length = in.readInt();
    byte type = in.readByte();
    int headerLength = in.readInt();
    byte[] header = new byte[headerLength];
    in.readFully(header);
    long body = (long) length - 5 - headerLength;
    while (body > 0) {
      body -= in.skip(body);
    }
    if (type != MessageType.RESPONSE.id()) {
      throw new IOException("expected a response, got type " + type);
    }
    try {
      return Response.parseFrom(header);
    } catch (InvalidProtocolBufferException e) {
      throw new IOException(e);
    }
  }

  /**
   * Reads and drops what the server sends until it closes the connection or {@code millis} pass.
   */
  public boolean closedByServerWithin(int millis) throws IOException {
    socket.setSoTimeout(millis);
    byte[] buf = new byte[8192];
    try {
      while (true) {
        if (in.read(buf) < 0) {
          return true;
        }
      }
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // closing a test socket
    }
  }
}
