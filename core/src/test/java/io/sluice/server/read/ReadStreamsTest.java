package io.sluice.server.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.CommittedSplitFiles;
import io.sluice.server.storage.QuotaExceededException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReadStreamsTest {
  @TempDir Path tmp;

  private CommittedSplitFile file() throws IOException {
    return CommittedSplitFiles.write(tmp.resolve("split"), 0, List.of());
  }

  @Test
  void streamsBelongToTheirConnectionAndAreBounded() throws IOException {
    ReadStreams streams = new ReadStreams(2, new StreamQuota(StreamQuota.NONE));
    CommittedSplitFile file = file();
    EmbeddedChannel a = new EmbeddedChannel();
    EmbeddedChannel b = new EmbeddedChannel();
    ReadStreams.Stream s1 = streams.open(a, file);
    ReadStreams.Stream s2 = streams.open(a, file);
    assertThat(streams.open(a, file)).as("third stream on one connection").isNull();
    assertThat(streams.get(b, s1.id())).as("another connection's stream").isNull();
    assertThat(streams.close(a, s1.id())).isTrue();
    assertThat(streams.close(a, s1.id())).isFalse();
    assertThat(streams.open(a, file)).isNotNull();
    streams.closeAll(a);
    assertThat(streams.get(a, s2.id())).isNull();
    assertThat(streams.openCount()).isZero();
    a.finishAndReleaseAll();
    b.finishAndReleaseAll();
  }

  @Test
  void anApplicationsStreamsAreBoundedOverItsConnections() throws IOException {
    StreamQuota quota =
        new StreamQuota(
            new StreamQuota.Limit() {
              @Override
              public int maxOpenStreams(String appId) {
                return 2;
              }

              @Override
              public String openStreamsRefusal(String appId, int max, String what) {
                return appId + " holds " + max + "; " + what + " refused";
              }
            });
    ReadStreams streams = new ReadStreams(10, quota);
    CommittedSplitFile file = file();
    EmbeddedChannel a = new EmbeddedChannel();
    EmbeddedChannel b = new EmbeddedChannel();
    ReadStreams.Stream first = streams.open(a, file);
    streams.open(b, file);
    assertThatThrownBy(() -> streams.open(b, file))
        .isInstanceOf(QuotaExceededException.class)
        .hasMessage("app-test holds 2; " + file.key() + " refused");
    assertThat(quota.openBy("app-test")).isEqualTo(2);

    streams.close(a, first.id());
    assertThat(streams.open(b, file)).as("a stream closed, one may open").isNotNull();
    streams.closeAll(b);
    assertThat(quota.openBy("app-test")).as("every stream closed").isZero();
    a.finishAndReleaseAll();
    b.finishAndReleaseAll();
  }

  @Test
  void aStreamOpenedAsItsConnectionClosesIsNotLeftBehind() throws IOException {
    StreamQuota quota = new StreamQuota(StreamQuota.NONE);
    ReadStreams streams = new ReadStreams(2, quota);
    EmbeddedChannel closed = new EmbeddedChannel();
    closed.close();
    streams.closeAll(closed); // the connection's close ran before the open (after a sort) did
    assertThat(streams.open(closed, file())).isNull();
    assertThat(streams.openCount()).as("streams left open").isZero();
    assertThat(quota.openBy("app-test")).isZero();
    closed.finishAndReleaseAll();
  }

  /**
   * The connection closes, and its closeAll runs, while a stream is being opened on it: between the
   * open taking the connection's set of streams and adding its stream to it (the quota's check runs
   * there, and this test's limit closes the connection at that moment). The stream must not stay
   * counted against its application after both are done.
   */
  @Test
  void aStreamWhoseConnectionClosesDuringTheOpenIsNotLeftCounted() throws IOException {
    EmbeddedChannel channel = new EmbeddedChannel();
    ReadStreams[] streams = new ReadStreams[1];
    StreamQuota quota =
        new StreamQuota(
            new StreamQuota.Limit() {
              @Override
              public int maxOpenStreams(String appId) {
                channel.close(); // as the connection's close does, on its event loop
                streams[0].closeAll(channel);
                return 0;
              }

              @Override
              public String openStreamsRefusal(String appId, int max, String what) {
                return "";
              }
            });
    streams[0] = new ReadStreams(2, quota);
    assertThat(streams[0].open(channel, file())).isNull();
    assertThat(streams[0].openCount()).as("streams left open").isZero();
    assertThat(quota.openBy("app-test")).as("streams counted against the application").isZero();
    channel.finishAndReleaseAll();
  }
}
