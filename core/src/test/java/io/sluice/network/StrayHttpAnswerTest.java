package io.sluice.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.protocol.proto.Heartbeat;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * An HTTP request on a frame port is answered 421 and the connection closes; frames pass untouched
 * whatever way their bytes arrive; a client that reads an HTTP answer says so.
 */
class StrayHttpAnswerTest {
  private static final String BODY = "{\"error\":\"wrong port\",\"adminPort\":9291}";

  private static EmbeddedChannel channel() {
    return new EmbeddedChannel(new StrayHttpAnswer(() -> BODY));
  }

  private static ByteBuf ascii(String s) {
    return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
  }

  private static String written(EmbeddedChannel ch) {
    StringBuilder out = new StringBuilder();
    for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
      out.append(b.toString(StandardCharsets.UTF_8));
      b.release();
    }
    return out.toString();
  }

  @Test
  void httpRequestIsAnswered421AndClosed() {
    EmbeddedChannel ch = channel();
    ch.writeInbound(ascii("GET /api/v1/status HTTP/1.1\r\nHost: h:9290\r\n\r\n"));
    String answer = written(ch);
    assertThat(answer)
        .startsWith("HTTP/1.1 421 Misdirected Request\r\n")
        .contains("Content-Type: application/json\r\n", "Connection: close\r\n")
        .contains("Content-Length: " + BODY.length() + "\r\n")
        .endsWith("\r\n\r\n" + BODY);
    assertThat(ch.isOpen()).isFalse();
    Object passed = ch.readInbound();
    assertThat(passed).isNull();
  }

  @Test
  void answerWaitsForTheWholeHeadArrivingByteByByte() {
    EmbeddedChannel ch = channel();
    String request = "POST /api/v1/decommission HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    for (int i = 0; i < request.length() - 1; i++) {
      ch.writeInbound(ascii(request.substring(i, i + 1)));
      assertThat(written(ch)).as("after %d bytes", i + 1).isEmpty();
      assertThat(ch.isOpen()).isTrue();
    }
    ch.writeInbound(ascii("\n"));
    assertThat(written(ch)).startsWith("HTTP/1.1 421 ");
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void aHeadWithoutEndIsAnsweredAtItsBound() {
    EmbeddedChannel ch = channel();
    ch.writeInbound(ascii("GET /" + "x".repeat(StrayHttpAnswer.MAX_REQUEST_HEAD)));
    assertThat(written(ch)).startsWith("HTTP/1.1 421 ");
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void everyMethodIsRecognised() {
    for (String method : StrayHttpAnswer.METHODS) {
      EmbeddedChannel ch = channel();
      ch.writeInbound(ascii(method + "/ HTTP/1.1\r\n\r\n"));
      assertThat(written(ch)).as(method).startsWith("HTTP/1.1 421 ");
    }
  }

  @Test
  void framesPassUntouchedAndTheHandlerLeaves() {
    Message request =
        Messages.request(
            MessageType.HEARTBEAT,
            Heartbeat.newBuilder().setRequestId(7).setAppId("app-1").build(),
            7);
    EmbeddedChannel encode = new EmbeddedChannel(FrameEncoder.INSTANCE);
    encode.writeOutbound(request);
    ByteBuf frame = Unpooled.buffer();
    for (ByteBuf b; (b = encode.readOutbound()) != null; ) {
      frame.writeBytes(b);
      b.release();
    }
    byte[] bytes = new byte[frame.readableBytes()];
    frame.readBytes(bytes);
    frame.release();

    EmbeddedChannel ch = channel();
    // one byte at a time: the first bytes of a frame must not be held back or reordered
    for (byte b : bytes) {
      ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }
    ByteBuf passed = Unpooled.buffer();
    for (ByteBuf b; (b = ch.readInbound()) != null; ) {
      passed.writeBytes(b);
      b.release();
    }
    byte[] got = new byte[passed.readableBytes()];
    passed.readBytes(got);
    passed.release();
    assertThat(got).isEqualTo(bytes);
    assertThat(ch.pipeline().get(StrayHttpAnswer.class)).isNull();
    assertThat(written(ch)).isEmpty();
    assertThat(ch.isOpen()).isTrue();
  }

  @Test
  void aMethodNameFurtherOnIsNotHttp() {
    EmbeddedChannel ch = channel();
    ch.writeInbound(ascii("\0\0\0\u0020GET / HTTP/1.1\r\n\r\n"));
    assertThat(ch.pipeline().get(StrayHttpAnswer.class)).isNull();
    ByteBuf passed = ch.readInbound();
    assertThat(passed.toString(StandardCharsets.US_ASCII)).startsWith("\0\0\0 GET");
    passed.release();
    assertThat(written(ch)).isEmpty();
  }

  @Test
  void aClientThatReadsAnHttpAnswerNamesThePorts() {
    EmbeddedChannel client =
        new EmbeddedChannel(new FrameDecoder(SluiceProtocol.INSTANCE, 1 << 20));
    assertThatThrownBy(
            () -> client.writeInbound(ascii("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n")))
        .isInstanceOf(CorruptedFrameException.class)
        .hasMessageContaining("answered with HTTP")
        .hasMessageContaining(
            "is it the admin port (sluice.metrics.port) rather than the shuffle port"
                + " (sluice.server.port)?");
  }
}
