package io.sluice.network;

import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import java.util.List;

/** Transport settings shared by servers and clients. */
public final class NetworkConf {
  public static final ConfigKey<Integer> IO_THREADS =
      ConfigKey.integer(
          "sluice.network.ioThreads", 0, "Netty event-loop threads; 0 means one per CPU core.");
  public static final ConfigKey<Long> CONNECT_TIMEOUT =
      ConfigKey.millis("sluice.network.connectTimeout", "10s", "Timeout for opening a connection.");
  public static final ConfigKey<Long> REQUEST_TIMEOUT =
      ConfigKey.millis(
          "sluice.network.requestTimeout",
          "120s",
          "Time a request may wait for its response before it fails naming the server.");
  public static final ConfigKey<Long> SILENT_AFTER =
      ConfigKey.millis(
          "sluice.network.silentAfter",
          "10s",
          "Clients: a push, commit or chunk read unanswered this long makes the client ping the"
              + " server on a control connection (never paused by flow control); a server that does"
              + " not answer the ping within this time either is silent (a black-holed host, a hung"
              + " process): those requests fail at once, its partitions move and reads go on from"
              + " the other copy, instead of each waiting sluice.network.requestTimeout. A server"
              + " that answers the ping is only busy, and its requests keep waiting.");
  public static final ConfigKey<Long> MAX_FRAME_SIZE =
      ConfigKey.bytes(
          "sluice.network.maxFrameSize",
          "128m",
          "Largest frame accepted; a larger one closes the connection that sent it. Set the same on"
              + " servers and clients: a pushed batch takes at most half of it.");
  public static final ConfigKey<Integer> CONNECTIONS_PER_SERVER =
      ConfigKey.integer(
          "sluice.network.connectionsPerServer",
          2,
          "Connections a client JVM keeps to each server, shared by all its tasks.");
  public static final ConfigKey<Boolean> EPOLL =
      ConfigKey.bool(
          "sluice.network.epoll",
          true,
          "Use the native epoll transport when it is available (when it does not load, the log"
              + " says why at WARN and Sluice runs on NIO).");
  public static final ConfigKey<Long> IDLE_TIMEOUT =
      ConfigKey.millis(
          "sluice.network.idleTimeout",
          "5min",
          "A client connection with no traffic and no pending request for this long is closed.");

  public static final ConfigKey<Long> MAX_CONTROL_FRAME_SIZE =
      ConfigKey.bytes(
          "sluice.network.maxControlFrameSize",
          "64k",
          "Largest frame without bulk data (every request but pushes) a server accepts; a larger"
              + " one closes the connection. Bounds what a connection can make the server buffer.");
  public static final ConfigKey<Integer> SERVER_MAX_CONNECTIONS =
      ConfigKey.integer(
          "sluice.network.server.maxConnections",
          4096,
          "Connections a server keeps open at once; more are closed as they arrive. Each active"
              + " connection may hold one 64 KiB socket read plus one control frame outside"
              + " sluice.memory.max.");
  public static final ConfigKey<Long> SERVER_IDLE_TIMEOUT =
      ConfigKey.millis(
          "sluice.network.server.idleTimeout",
          "10min",
          "A server closes a connection that sent and received nothing for this long (longer than"
              + " sluice.network.idleTimeout, after which clients close theirs).");
  public static final ConfigKey<Long> SERVER_BODY_TIMEOUT =
      ConfigKey.millis(
          "sluice.network.server.bodyTimeout",
          "60s",
          "A server closes a connection whose data frame (a push, region data) has not arrived"
              + " whole this long after the server reserved memory for its body, and gives the"
              + " memory back, so slow or stalled senders cannot hold sluice.memory.max.");
  public static final ConfigKey<Integer> SERVER_MAX_FILE_ANSWERS =
      ConfigKey.integer(
          "sluice.network.server.maxFileAnswers",
          64,
          "Answers read from files (chunks of committed splits) one connection may have under way"
              + " at once, each holding its file open until it is sent; past it the server stops"
              + " reading the connection until half of them are sent.");
  public static final ConfigKey<Long> SERVER_MAX_BODY_IN_FLIGHT =
      ConfigKey.bytes(
          "sluice.network.server.maxBodyInFlight",
          "0",
          "Largest data frame body a server reserves memory for on one connection; a larger one"
              + " closes the connection with an error naming this setting. 0 means half of"
              + " sluice.network.maxFrameSize, the largest batch a client pushes.");

  public static final List<ConfigKey<?>> KEYS =
      List.of(
          IO_THREADS,
          CONNECT_TIMEOUT,
          REQUEST_TIMEOUT,
          SILENT_AFTER,
          MAX_FRAME_SIZE,
          MAX_CONTROL_FRAME_SIZE,
          CONNECTIONS_PER_SERVER,
          EPOLL,
          IDLE_TIMEOUT,
          SERVER_MAX_CONNECTIONS,
          SERVER_IDLE_TIMEOUT,
          SERVER_BODY_TIMEOUT,
          SERVER_MAX_BODY_IN_FLIGHT,
          SERVER_MAX_FILE_ANSWERS);

  private final int ioThreads;
  private final long connectTimeoutMillis;
  private final long requestTimeoutMillis;
  private final long silentAfterMillis;
  private final int maxFrameSize;
  private final int connectionsPerServer;
  private final boolean epoll;
  private final long idleTimeoutMillis;
  private final int maxControlFrameSize;
  private final int serverMaxConnections;
  private final long serverIdleTimeoutMillis;
  private final long serverBodyTimeoutMillis;
  private final int serverMaxBodyInFlight;
  private final int serverMaxFileAnswers;
  private final Tls tls;

  public NetworkConf(SluiceConf conf) {
    int threads = conf.get(IO_THREADS);
    this.ioThreads = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
    this.connectTimeoutMillis = conf.get(CONNECT_TIMEOUT);
    this.requestTimeoutMillis = conf.get(REQUEST_TIMEOUT);
    this.silentAfterMillis = conf.get(SILENT_AFTER);
    if (silentAfterMillis < 1) {
      throw new IllegalArgumentException(SILENT_AFTER + " must be positive");
    }
    long frame = conf.get(MAX_FRAME_SIZE);
    if (frame < 1024 || frame > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          MAX_FRAME_SIZE + " must be between 1k and 2g, got " + frame + " bytes");
    }
    this.maxFrameSize = (int) frame;
    this.connectionsPerServer = conf.get(CONNECTIONS_PER_SERVER);
    if (connectionsPerServer < 1) {
      throw new IllegalArgumentException(
          CONNECTIONS_PER_SERVER + " must be at least 1, got " + connectionsPerServer);
    }
    this.epoll = conf.get(EPOLL);
    this.idleTimeoutMillis = conf.get(IDLE_TIMEOUT);
    long control = conf.get(MAX_CONTROL_FRAME_SIZE);
    if (control < 1024 || control > frame) {
      throw new IllegalArgumentException(
          MAX_CONTROL_FRAME_SIZE
              + " must be between 1k and "
              + MAX_FRAME_SIZE
              + " ("
              + frame
              + " bytes), got "
              + control
              + " bytes");
    }
    this.maxControlFrameSize = (int) control;
    this.serverMaxConnections = conf.get(SERVER_MAX_CONNECTIONS);
    if (serverMaxConnections < 1) {
      throw new IllegalArgumentException(
          SERVER_MAX_CONNECTIONS + " must be at least 1, got " + serverMaxConnections);
    }
    this.serverIdleTimeoutMillis = conf.get(SERVER_IDLE_TIMEOUT);
    if (serverIdleTimeoutMillis < 1000) {
      throw new IllegalArgumentException(
          SERVER_IDLE_TIMEOUT + " must be at least 1s, got " + serverIdleTimeoutMillis + " ms");
    }
    this.serverBodyTimeoutMillis = conf.get(SERVER_BODY_TIMEOUT);
    if (serverBodyTimeoutMillis < 1) {
      throw new IllegalArgumentException(
          SERVER_BODY_TIMEOUT + " must be positive, got " + serverBodyTimeoutMillis + " ms");
    }
    long inFlight = conf.get(SERVER_MAX_BODY_IN_FLIGHT);
    if (inFlight > frame) {
      throw new IllegalArgumentException(
          SERVER_MAX_BODY_IN_FLIGHT
              + " must be at most "
              + MAX_FRAME_SIZE
              + " ("
              + frame
              + " bytes), got "
              + inFlight
              + " bytes");
    }
    this.serverMaxBodyInFlight = inFlight == 0 ? maxFrameSize / 2 : (int) inFlight;
    this.serverMaxFileAnswers = conf.get(SERVER_MAX_FILE_ANSWERS);
    if (serverMaxFileAnswers < 2) {
      throw new IllegalArgumentException(
          SERVER_MAX_FILE_ANSWERS + " must be at least 2, got " + serverMaxFileAnswers);
    }
    this.tls = Tls.fromConf(conf);
  }

  public int ioThreads() {
    return ioThreads;
  }

  public long connectTimeoutMillis() {
    return connectTimeoutMillis;
  }

  public long requestTimeoutMillis() {
    return requestTimeoutMillis;
  }

  /** See {@link #SILENT_AFTER}. */
  public long silentAfterMillis() {
    return silentAfterMillis;
  }

  /** Bytes; frames above this close the connection. */
  public int maxFrameSize() {
    return maxFrameSize;
  }

  public int connectionsPerServer() {
    return connectionsPerServer;
  }

  public boolean epoll() {
    return epoll;
  }

  public long idleTimeoutMillis() {
    return idleTimeoutMillis;
  }

  /** Bytes; a server closes a connection that sends a longer frame without bulk data. */
  public int maxControlFrameSize() {
    return maxControlFrameSize;
  }

  public int serverMaxConnections() {
    return serverMaxConnections;
  }

  public long serverIdleTimeoutMillis() {
    return serverIdleTimeoutMillis;
  }

  /** Milliseconds; see {@link #SERVER_BODY_TIMEOUT}. */
  public long serverBodyTimeoutMillis() {
    return serverBodyTimeoutMillis;
  }

  /** Bytes; the largest data frame body a server reserves on one connection (resolved, not 0). */
  public int serverMaxBodyInFlight() {
    return serverMaxBodyInFlight;
  }

  /** TLS on every connection, or plain ({@code sluice.tls.*}). */
  public Tls tls() {
    return tls;
  }

  /** See {@link #SERVER_MAX_FILE_ANSWERS}. */
  public int serverMaxFileAnswers() {
    return serverMaxFileAnswers;
  }
}
