package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.BlackHoleProxy;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request left unanswered fails as silent only when its server answers no ping either: a busy
 * server (here: one that answers pings while the request waits) keeps its requests waiting.
 */
class SilentServerWatchTest {
  @TempDir Path tmp;

  private TestCluster cluster;
  private SilentServerWatch watch;
  private static final String APP = "app-silent";

  @BeforeEach
  void start() throws Exception {
    cluster = TestCluster.start(tmp, 1, Map.of("sluice.network.silentAfter", "100ms"));
    watch = cluster.context().silentServers();
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void aRequestToAServerThatAnswersNoPingFailsNamingTheServer() throws Exception {
    try (BlackHoleProxy silent =
        new BlackHoleProxy("127.0.0.1", cluster.addresses().get(0).getPort())) {
      silent.blackHole();
      ServerAddress server = ClientContext.address("127.0.0.1", silent.port());
      CompletableFuture<String> request = new CompletableFuture<>();
      CompletableFuture<String> watched = watch.watch(APP, server, request);
      assertThatThrownBy(() -> watched.get(60, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(SilentServerWatch.SilentServerException.class)
          .hasMessageContaining("127.0.0.1:" + silent.port())
          .hasMessageContaining("sluice.network.silentAfter");
      // the request itself is left to its owner, who releases what its answer holds
      assertThat(request).isNotDone();
    }
  }

  @Test
  void aRequestToAServerThatAnswersPingsKeepsWaitingAndThenCompletes() throws Exception {
    ServerAddress server = cluster.addresses().get(0);
    CompletableFuture<String> request = new CompletableFuture<>();
    CompletableFuture<String> watched = watch.watch(APP, server, request);
    Thread.sleep(1000); // ten times silentAfter: several pings, all answered
    assertThat(watched).isNotDone();
    request.complete("answer");
    assertThat(watched.get(60, TimeUnit.SECONDS)).isEqualTo("answer");
  }

  @Test
  void aFailedRequestFailsTheWatchedOneWithItsCause() {
    CompletableFuture<String> request = new CompletableFuture<>();
    CompletableFuture<String> watched = watch.watch(APP, cluster.addresses().get(0), request);
    request.completeExceptionally(new IllegalStateException("refused"));
    assertThatThrownBy(watched::join).hasRootCauseMessage("refused");
  }
}
