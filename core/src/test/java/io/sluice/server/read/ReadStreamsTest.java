package io.sluice.server.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class ReadStreamsTest {
  @Test
  void streamsBelongToTheirConnectionAndAreBounded() {
    ReadStreams streams = new ReadStreams(2);
    EmbeddedChannel a = new EmbeddedChannel();
    EmbeddedChannel b = new EmbeddedChannel();
    ReadStreams.Stream s1 = streams.open(a, null);
    ReadStreams.Stream s2 = streams.open(a, null);
    assertThat(streams.open(a, null)).as("third stream on one connection").isNull();
    assertThat(streams.get(b, s1.id())).as("another connection's stream").isNull();
    assertThat(streams.close(a, s1.id())).isTrue();
    assertThat(streams.close(a, s1.id())).isFalse();
    assertThat(streams.open(a, null)).isNotNull();
    streams.closeAll(a);
    assertThat(streams.get(a, s2.id())).isNull();
    assertThat(streams.openCount()).isZero();
    a.finishAndReleaseAll();
    b.finishAndReleaseAll();
  }

  @Test
  void aStreamOpenedAsItsConnectionClosesIsNotLeftBehind() {
    ReadStreams streams = new ReadStreams(2);
    EmbeddedChannel closed = new EmbeddedChannel();
    closed.close();
    streams.closeAll(closed); // the connection's close ran before the open (after a sort) did
    assertThat(streams.open(closed, null)).isNull();
    assertThat(streams.openCount()).as("streams left open").isZero();
    closed.finishAndReleaseAll();
  }
}
