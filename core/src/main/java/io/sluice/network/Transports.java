package io.sluice.network;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the native epoll transport when it is available and enabled, NIO otherwise.
 *
 * <p>Netty refuses to load its native library when two jars on the class path carry different
 * copies of it (a Hadoop minicluster or a Hadoop distribution's lib folder can). Sluice then runs
 * on NIO, and on Linux says why once, at WARN: the fix is to keep the other copy off the class
 * path, or to put Sluice's jars first and start the JVM with {@code
 * -Dio.netty.native.detectNativeLibraryDuplicates=false} as {@code bin/shuffle-daemon} does.
 */
public final class Transports {
  private static final Logger LOG = LoggerFactory.getLogger(Transports.class);
  private static final AtomicBoolean WARNED = new AtomicBoolean();
  private static final boolean LINUX =
      System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");

  private Transports() {}

  public static boolean useEpoll(NetworkConf conf) {
    if (!conf.epoll()) {
      return false;
    }
    if (Epoll.isAvailable()) {
      return true;
    }
    // elsewhere than Linux there is no epoll to expect
    if (LINUX && WARNED.compareAndSet(false, true)) {
      LOG.warn(
          "sluice.network.epoll is true but Netty's native epoll transport does not load here,"
              + " so Sluice runs on NIO: {}",
          TlsErrors.rootMessage(Epoll.unavailabilityCause()));
    }
    return false;
  }

  /** "epoll" or "nio": the transport {@code conf} gets in this JVM. */
  public static String name(NetworkConf conf) {
    return useEpoll(conf) ? "epoll" : "nio";
  }

  public static EventLoopGroup newEventLoopGroup(NetworkConf conf, int threads, String name) {
    DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
    return useEpoll(conf)
        ? new EpollEventLoopGroup(threads, factory)
        : new NioEventLoopGroup(threads, factory);
  }

  public static Class<? extends ServerSocketChannel> serverChannelClass(NetworkConf conf) {
    return useEpoll(conf) ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  public static Class<? extends SocketChannel> clientChannelClass(NetworkConf conf) {
    return useEpoll(conf) ? EpollSocketChannel.class : NioSocketChannel.class;
  }
}
