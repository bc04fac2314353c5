package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchFormatTest {
  private static ByteBuf batch(int map, int attempt, int id, int length, int actualBytes) {
    ByteBuf b = Unpooled.buffer();
    BatchFormat.writeHeader(b, map, attempt, id, length);
    b.writeZero(actualBytes);
    return b;
  }

  @Test
  void wellFormedBodyVisitsEveryHeader() {
    ByteBuf body = Unpooled.wrappedBuffer(batch(1, 0, 0, 3, 3), batch(2, 1, 5, 0, 0));
    List<String> seen = new ArrayList<>();
    assertThat(BatchFormat.check(body, (m, a, b, l) -> seen.add(m + "/" + a + "/" + b + "/" + l)))
        .isNull();
    assertThat(seen).containsExactly("1/0/0/3", "2/1/5/0");
    assertThat(body.readerIndex()).isZero();
    body.release();
  }

  @Test
  void problemsAreNamed() {
    assertThat(BatchFormat.check(Unpooled.EMPTY_BUFFER, (m, a, b, l) -> {}))
        .isEqualTo("push body is empty");
    assertThat(BatchFormat.check(Unpooled.buffer().writeZero(10), (m, a, b, l) -> {}))
        .contains("truncated");
    assertThat(BatchFormat.check(batch(0, 0, 0, 10, 9), (m, a, b, l) -> {}))
        .contains("claims 10 payload bytes but 9 remain");
    assertThat(BatchFormat.check(batch(0, 0, 0, -1, 0), (m, a, b, l) -> {}))
        .contains("claims -1 payload bytes");
    assertThat(BatchFormat.check(batch(-3, 0, 0, 0, 0), (m, a, b, l) -> {}))
        .contains("negative map index");
  }
}
