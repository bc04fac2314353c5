package io.sluice.client;

import io.sluice.network.Message;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.UnregisterApplication;
import java.util.function.LongFunction;

/**
 * The lifecycle requests every coordinator sends to servers (Spark's and Flink's alike), and the
 * close of a read stream every reader sends, ready for {@link ClientContext#call} and {@link
 * ClientContext#callAsync}.
 */
public final class ServerRequests {
  private ServerRequests() {}

  /**
   * Registers a shuffle with its shape: the server refuses every later request of the shuffle that
   * names a map index at or above {@code numMaps} or a partition (subpartition, for map partitions)
   * at or above {@code numPartitions}. Without the application's settings: no distributed tier, the
   * server's own limits.
   */
  public static LongFunction<Message> registerShuffle(
      String appId, int shuffleId, int numMaps, int numPartitions) {
    return registerShuffle(
        RegisterShuffle.newBuilder()
            .setAppId(appId)
            .setShuffleId(shuffleId)
            .setNumMaps(numMaps)
            .setNumPartitions(numPartitions));
  }

  /**
   * Like {@link #registerShuffle(String, int, int, int)}, with what the application's settings ask
   * of the server: its distributed tier for every split ({@code sluice.shuffle.distributedTier}),
   * the resource manager's application this one runs in (whose end a NodeManager's server takes as
   * this application's), and its limits ({@code sluice.client.limits.*}).
   */
  public static LongFunction<Message> registerShuffle(
      String appId, int shuffleId, int numMaps, int numPartitions, ClientConf conf) {
    return registerShuffle(
        RegisterShuffle.newBuilder()
            .setAppId(appId)
            .setShuffleId(shuffleId)
            .setNumMaps(numMaps)
            .setNumPartitions(numPartitions)
            .setDistributedTier(conf.distributedTier())
            .setClusterAppId(conf.clusterApplicationId())
            .setLimits(conf.requestedLimits()));
  }

  private static LongFunction<Message> registerShuffle(RegisterShuffle.Builder registration) {
    return id ->
        Messages.request(
            MessageType.REGISTER_SHUFFLE, registration.clone().setRequestId(id).build(), id);
  }

  /** Keeps the application's files on the server; one that stops sending it expires. */
  public static LongFunction<Message> heartbeat(String appId) {
    return id ->
        Messages.request(
            MessageType.HEARTBEAT,
            Heartbeat.newBuilder().setRequestId(id).setAppId(appId).build(),
            id);
  }

  /** Deletes every file of the application on the server. */
  public static LongFunction<Message> unregisterApplication(String appId) {
    return id ->
        Messages.request(
            MessageType.UNREGISTER_APPLICATION,
            UnregisterApplication.newBuilder().setRequestId(id).setAppId(appId).build(),
            id);
  }

  /** Deletes one map partition, committed or not. */
  public static LongFunction<Message> releaseMapPartition(MapPartitionRef partition) {
    return id ->
        Messages.request(
            MessageType.RELEASE_MAP_PARTITION,
            ReleaseMapPartition.newBuilder().setRequestId(id).setPartition(partition).build(),
            id);
  }

  /** Closes a read stream (a reduce partition split's or a map partition's) on the server. */
  public static LongFunction<Message> closeStream(long streamId) {
    return id ->
        Messages.request(
            MessageType.CLOSE_STREAM,
            CloseStream.newBuilder().setRequestId(id).setStreamId(streamId).build(),
            id);
  }
}
