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

/** Picks the native epoll transport when it is available and enabled, NIO otherwise. */
public final class Transports {
  private Transports() {}

  public static boolean useEpoll(NetworkConf conf) {
    return conf.epoll() && Epoll.isAvailable();
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
