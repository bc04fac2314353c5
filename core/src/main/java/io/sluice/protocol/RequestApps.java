package io.sluice.protocol;

import com.google.protobuf.MessageLite;
import io.sluice.protocol.proto.AuthHello;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.PushMerged;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.ReportChecksumFailure;
import io.sluice.protocol.proto.UnregisterApplication;
import io.sluice.protocol.proto.UnregisterShuffle;

/**
 * The application each request acts for, the one fact authorization needs from a request. Kept next
 * to {@link MessageType}: a new request type that names an application must be added here, and
 * {@code AuthenticationIT}, which sends every request type as a stranger, fails when one is not.
 */
public final class RequestApps {
  private RequestApps() {}

  /**
   * The application {@code header} names, or null for a request that names none: stream requests
   * (FETCH_CHUNK, CLOSE_STREAM, READ_MAP_BUFFER) act on streams their own connection opened, and
   * the coordinator's requests go to an endpoint that serves one application only.
   */
  public static String of(MessageLite header) {
    if (header instanceof PushData) {
      return ((PushData) header).getAppId();
    } else if (header instanceof PushMerged) {
      return ((PushMerged) header).getAppId();
    } else if (header instanceof RegionData) {
      return ((RegionData) header).getPartition().getAppId();
    } else if (header instanceof OpenStream) {
      return ((OpenStream) header).getAppId();
    } else if (header instanceof RegisterShuffle) {
      return ((RegisterShuffle) header).getAppId();
    } else if (header instanceof Heartbeat) {
      return ((Heartbeat) header).getAppId();
    } else if (header instanceof CommitShuffle) {
      return ((CommitShuffle) header).getAppId();
    } else if (header instanceof UnregisterShuffle) {
      return ((UnregisterShuffle) header).getAppId();
    } else if (header instanceof UnregisterApplication) {
      return ((UnregisterApplication) header).getAppId();
    } else if (header instanceof RegionStart) {
      return ((RegionStart) header).getPartition().getAppId();
    } else if (header instanceof RegionFinish) {
      return ((RegionFinish) header).getPartition().getAppId();
    } else if (header instanceof CommitMapPartition) {
      return ((CommitMapPartition) header).getPartition().getAppId();
    } else if (header instanceof ReleaseMapPartition) {
      return ((ReleaseMapPartition) header).getPartition().getAppId();
    } else if (header instanceof OpenMapStream) {
      return ((OpenMapStream) header).getPartition().getAppId();
    } else if (header instanceof ReportChecksumFailure) {
      return ((ReportChecksumFailure) header).getAppId();
    } else if (header instanceof AuthHello) {
      return ((AuthHello) header).getAppId();
    }
    return null;
  }
}
