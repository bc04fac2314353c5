package io.sluice.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.AppRegistration;
import io.sluice.protocol.proto.AuthHello;
import io.sluice.protocol.proto.AuthProof;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.GetCommittedSplits;
import io.sluice.protocol.proto.GetShuffleLocations;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.MapperEnd;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.PushMerged;
import io.sluice.protocol.proto.ReadMapBuffer;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.ReportChecksumFailure;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.RevivePartition;
import io.sluice.protocol.proto.Status;
import io.sluice.protocol.proto.UnregisterApplication;
import io.sluice.protocol.proto.UnregisterShuffle;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCertificates;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With {@code sluice.auth.enabled}, a stranger (no secret, a wrong secret, or another application's
 * secret) gets nothing from a server or a coordinator endpoint and changes nothing: every request
 * type is tried on both ports, then the victim reads its data back intact.
 */
class AuthenticationIT {
  static final String CLUSTER_SECRET = "cluster-secret-for-tests-0123456789";
  static final String APP_SECRET = "the-victims-app-secret-0123456789";
  static final String OTHER_APP = "other-app-1";
  static final String OTHER_SECRET = "another-apps-secret-0123456789";

  /** Request types a server answers. */
  static final Set<MessageType> SERVER_TYPES =
      EnumSet.of(
          MessageType.REGISTER_SHUFFLE,
          MessageType.HEARTBEAT,
          MessageType.UNREGISTER_SHUFFLE,
          MessageType.UNREGISTER_APPLICATION,
          MessageType.PUSH_DATA,
          MessageType.PUSH_MERGED,
          MessageType.COMMIT_SHUFFLE,
          MessageType.OPEN_STREAM,
          MessageType.FETCH_CHUNK,
          MessageType.CLOSE_STREAM,
          MessageType.REGION_START,
          MessageType.REGION_DATA,
          MessageType.REGION_FINISH,
          MessageType.COMMIT_MAP_PARTITION,
          MessageType.RELEASE_MAP_PARTITION,
          MessageType.OPEN_MAP_STREAM,
          MessageType.READ_MAP_BUFFER,
          MessageType.REPORT_CHECKSUM_FAILURE);

  /** Request types a coordinator's endpoint answers. */
  static final Set<MessageType> COORDINATOR_TYPES =
      EnumSet.of(
          MessageType.GET_SHUFFLE_LOCATIONS,
          MessageType.MAPPER_END,
          MessageType.GET_COMMITTED_SPLITS,
          MessageType.REVIVE_PARTITION);

  @TempDir Path tmp;

  static Map<String, String> auth(String appSecret, String clusterSecret) {
    Map<String, String> conf = new HashMap<>();
    conf.put("sluice.auth.enabled", "true");
    conf.put("sluice.auth.appSecret", appSecret);
    if (clusterSecret != null) {
      conf.put("sluice.auth.clusterSecret", clusterSecret);
    }
    return conf;
  }

  @Test
  void everyTableEntryIsARequestTypeAndEveryRequestTypeIsInTheTable() {
    Set<MessageType> all = EnumSet.allOf(MessageType.class);
    all.removeAll(SERVER_TYPES);
    all.removeAll(COORDINATOR_TYPES);
    // HELLO states versions and is answered before authentication (ProtocolVersionIT)
    assertThat(all)
        .containsExactlyInAnyOrder(
            MessageType.RESPONSE,
            MessageType.HELLO,
            MessageType.AUTH_HELLO,
            MessageType.AUTH_PROOF);
  }

  @Test
  void strangersAreRefusedEveryRequestOnBothPortsAndChangeNothing() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, auth(APP_SECRET, CLUSTER_SECRET))) {
      Records.Checker before = writeAndRead(cluster);
      int serverPort = cluster.server(0).port();
      int coordinatorPort = cluster.coordinator().port();

      for (MessageType type : SERVER_TYPES) {
        // no authentication at all
        try (RawConnection c = new RawConnection("127.0.0.1", serverPort)) {
          c.send(request(type, TestCluster.APP_ID));
          if (carriesData(type)) {
            assertThat(c.closedByServerWithin(10_000)).as(type.name()).isTrue();
          } else {
            assertForbidden(c.readResponse(), type, "requires authentication");
          }
        }
        // authenticated, but as another application
        try (RawConnection c = new RawConnection("127.0.0.1", serverPort)) {
          Response accepted = authenticate(c, OTHER_APP, OTHER_SECRET, CLUSTER_SECRET);
          assertThat(accepted.getStatus()).isEqualTo(Status.OK);
          c.send(request(type, TestCluster.APP_ID));
          Response r = c.readResponse();
          if (type == MessageType.FETCH_CHUNK
              || type == MessageType.CLOSE_STREAM
              || type == MessageType.READ_MAP_BUFFER) {
            // stream requests name no application: they reach only this connection's streams
            assertThat(r.getStatus()).as(type.name()).isNotEqualTo(Status.OK);
          } else {
            assertForbidden(r, type, "may not act for another application");
          }
        }
      }

      // a wrong secret fails the proof, and the connection closes
      try (RawConnection c = new RawConnection("127.0.0.1", serverPort)) {
        Response r = authenticate(c, TestCluster.APP_ID, "not-the-victims-secret-0123", null);
        assertThat(r.getStatus()).isEqualTo(Status.FORBIDDEN);
        assertThat(r.getMessage()).contains("does not hold its key");
        assertThat(c.closedByServerWithin(10_000)).isTrue();
      }
      // an application that does not exist looks the same as one that does
      try (RawConnection c = new RawConnection("127.0.0.1", serverPort)) {
        Response r = authenticate(c, "no-such-app", "not-the-victims-secret-0123", null);
        assertThat(r.getStatus()).isEqualTo(Status.FORBIDDEN);
        assertThat(r.getMessage()).contains("does not hold its key");
      }
      // only the cluster secret registers, and nobody re-registers a taken id
      try (RawConnection c = new RawConnection("127.0.0.1", serverPort)) {
        Response r =
            hello(c, "thief-app", "a-thiefs-own-app-secret-0123", "not-the-cluster-secret");
        assertThat(r.getStatus()).isEqualTo(Status.FORBIDDEN);
        assertThat(r.getMessage()).contains("not signed with this server's cluster secret");
      }
      try (RawConnection c = new RawConnection("127.0.0.1", serverPort)) {
        Response r = hello(c, TestCluster.APP_ID, "a-thiefs-own-app-secret-0123", CLUSTER_SECRET);
        assertThat(r.getStatus()).isEqualTo(Status.FORBIDDEN);
        assertThat(r.getMessage()).contains("registered here with another key");
      }

      // the coordinator's endpoint
      for (MessageType type : COORDINATOR_TYPES) {
        try (RawConnection c = new RawConnection("127.0.0.1", coordinatorPort)) {
          c.send(request(type, TestCluster.APP_ID));
          assertForbidden(c.readResponse(), type, "requires authentication");
        }
      }
      try (RawConnection c = new RawConnection("127.0.0.1", coordinatorPort)) {
        Response r = authenticate(c, OTHER_APP, OTHER_SECRET, null);
        assertThat(r.getStatus()).isEqualTo(Status.FORBIDDEN);
        assertThat(c.closedByServerWithin(10_000)).isTrue();
      }
      try (RawConnection c = new RawConnection("127.0.0.1", coordinatorPort)) {
        // a registration binds nothing there: the endpoint knows its application's key
        Response r =
            authenticate(c, TestCluster.APP_ID, "a-thiefs-own-app-secret-0123", CLUSTER_SECRET);
        assertThat(r.getStatus()).isEqualTo(Status.FORBIDDEN);
        assertThat(r.getMessage()).contains("does not hold its key");
      }

      assertThat(cluster.server(0).metrics().authFailures().getCount()).isPositive();
      Records.Checker after = readAll(cluster);
      assertThat(after.records()).isEqualTo(before.records());
      assertThat(after.bytes()).isEqualTo(before.bytes());
    }
  }

  @Test
  void keysSurviveARestartAndClientsOfTheApplicationReadWithoutTheClusterSecret() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, auth(APP_SECRET, CLUSTER_SECRET))) {
      Records.Checker written = writeAndRead(cluster);
      byte[] appKey =
          AuthCodes.appKey(APP_SECRET.getBytes(StandardCharsets.UTF_8), TestCluster.APP_ID);
      cluster.restartServer(
          0, serverRoot -> assertOwnerOnlyAndNoKeyInPlainText(serverRoot, appKey));
      // an executor: the application secret only, no cluster secret
      SluiceConf executorConf = SluiceConf.of(auth(APP_SECRET, null));
      try (ClientContext executor = new ClientContext(executorConf)) {
        CoordinatorClient coordinator =
            new CoordinatorClient(
                executor,
                TestCluster.APP_ID,
                ClientContext.address("127.0.0.1", cluster.coordinator().port()));
        Records.Checker read = new Records.Checker();
        try (PartitionReader reader =
            new PartitionReader(
                executor, TestCluster.APP_ID, 0, coordinator.committedSplits(0, 0, 4), 0, 2)) {
          ShuffleBatch batch;
          while ((batch = reader.next()) != null) {
            read.accept(batch.partitionId(), batch.payload());
          }
        }
        assertThat(read.records()).isEqualTo(written.records());
        assertThat(read.bytes()).isEqualTo(written.bytes());
      }
    }
  }

  /**
   * Another user on the host reads nothing of a stopped server: its data and state directories are
   * rwx------, its data files rw-------, and no file holds an application's key as it is.
   */
  private static void assertOwnerOnlyAndNoKeyInPlainText(Path serverRoot, byte[] appKey)
      throws IOException {
    Path disk1 = serverRoot.resolve("disk1");
    for (Path dir : List.of(disk1, serverRoot.resolve("disk2"), disk1.resolve(".sluice-state"))) {
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
          .as(dir.toString())
          .isEqualTo("rwx------");
    }
    List<Path> files;
    try (Stream<Path> walk = Files.walk(serverRoot)) {
      files = walk.filter(Files::isRegularFile).collect(Collectors.toList());
    }
    List<Path> dataFiles = new ArrayList<>();
    for (Path f : files) {
      byte[] bytes = Files.readAllBytes(f);
      assertThat(indexOf(bytes, appKey)).as("the application's key in " + f).isEqualTo(-1);
      if (!f.startsWith(disk1.resolve(".sluice-state"))) {
        dataFiles.add(f);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f)))
            .as(f.toString())
            .isEqualTo("rw-------");
      }
    }
    assertThat(dataFiles).as("data files written").isNotEmpty();
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  @Test
  void authenticationWorksOverTls() throws Exception {
    Map<String, String> conf = auth(APP_SECRET, CLUSTER_SECRET);
    conf.putAll(TestCertificates.create(tmp.resolve("certs"), "cluster").conf());
    try (TestCluster cluster = TestCluster.start(tmp, 1, conf)) {
      Records.Checker read = writeAndRead(cluster);
      assertThat(read.bytes()).isPositive();
      assertThat(cluster.server(0).metrics().authFailures().getCount()).isZero();
    }
  }

  @Test
  void misconfiguredClientsFailNamingTheProblem() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, auth(APP_SECRET, CLUSTER_SECRET))) {
      cluster.coordinator().registerShuffle(0, 1, 1);
      try (ClientContext plain = new ClientContext(SluiceConf.of(Map.of()))) {
        assertThatThrownBy(
                () ->
                    plain.call(
                        TestCluster.APP_ID,
                        cluster.addresses().get(0),
                        io.sluice.client.ServerRequests.heartbeat(TestCluster.APP_ID)))
            .hasMessageContaining("requires authentication");
      }
      try (ClientContext wrong =
          new ClientContext(SluiceConf.of(auth("a-wrong-app-secret-0123456", null)))) {
        assertThatThrownBy(
                () ->
                    wrong.call(
                        TestCluster.APP_ID,
                        cluster.addresses().get(0),
                        io.sluice.client.ServerRequests.heartbeat(TestCluster.APP_ID)))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("Cannot authenticate application " + TestCluster.APP_ID)
            .hasMessageContaining("does not hold its key");
      }
    }
    try (TestCluster plainCluster = TestCluster.start(tmp.resolve("plain"), 1)) {
      try (ClientContext secure =
          new ClientContext(SluiceConf.of(auth(APP_SECRET, CLUSTER_SECRET)))) {
        assertThatThrownBy(
                () ->
                    secure.call(
                        TestCluster.APP_ID,
                        plainCluster.addresses().get(0),
                        io.sluice.client.ServerRequests.heartbeat(TestCluster.APP_ID)))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("does not authenticate connections");
      }
    }
    assertThatThrownBy(
            () -> new ClientContext(SluiceConf.of(Map.of("sluice.auth.enabled", "true"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.auth.appSecretFile");
  }

  static Records.Checker writeAndRead(TestCluster cluster) throws Exception {
    cluster.coordinator().registerShuffle(0, 2, 4);
    for (int map = 0; map < 2; map++) {
      try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
        for (int i = 0; i < 200; i++) {
          byte[] r = Records.record(map, i % 4, i / 4, 100 + i);
          pusher.write(i % 4, r, 0, r.length);
        }
        pusher.finish();
      }
    }
    Records.Checker checker = readAll(cluster);
    assertThat(checker.records()).isEqualTo(400);
    return checker;
  }

  private static Records.Checker readAll(TestCluster cluster) throws Exception {
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(0, 0, 4, 0, 2)) {
      ShuffleBatch batch;
      while ((batch = reader.next()) != null) {
        checker.accept(batch.partitionId(), batch.payload());
      }
    }
    return checker;
  }

  private static void assertForbidden(Response r, MessageType type, String why) {
    assertThat(r.getStatus()).as(type.name()).isEqualTo(Status.FORBIDDEN);
    assertThat(r.getMessage()).as(type.name()).contains(why);
    // says nothing about the application named
    assertThat(r.getMessage()).as(type.name()).doesNotContain(TestCluster.APP_ID);
  }

  private static boolean carriesData(MessageType type) {
    return type == MessageType.PUSH_DATA
        || type == MessageType.PUSH_MERGED
        || type == MessageType.REGION_DATA;
  }

  /** Sends AUTH_HELLO (with a registration when {@code clusterSecret} is set); the answer. */
  static Response hello(RawConnection c, String appId, String appSecret, String clusterSecret)
      throws IOException {
    return helloWith(c, appId, appSecret, clusterSecret, new byte[AuthCodes.NONCE_BYTES]);
  }

  private static Response helloWith(
      RawConnection c, String appId, String appSecret, String clusterSecret, byte[] clientNonce)
      throws IOException {
    AuthHello.Builder hello =
        AuthHello.newBuilder()
            .setRequestId(1)
            .setAppId(appId)
            .setClientNonce(ByteString.copyFrom(clientNonce));
    if (clusterSecret != null) {
      AppRegistration registration =
          AuthCodes.register(
              bytes(clusterSecret), appId, AuthCodes.appKey(bytes(appSecret), appId));
      hello.setRegistration(registration);
    }
    c.send(RawConnection.frame(MessageType.AUTH_HELLO, hello.build(), new byte[0]));
    return c.readResponse();
  }

  /** The whole exchange; the answer to the proof (or to the hello when that was refused). */
  static Response authenticate(
      RawConnection c, String appId, String appSecret, String clusterSecret) throws IOException {
    byte[] clientNonce = AuthCodes.nonce();
    Response challenge = helloWith(c, appId, appSecret, clusterSecret, clientNonce);
    if (challenge.getStatus() != Status.OK) {
      return challenge;
    }
    byte[] serverNonce = challenge.getAuthChallenge().getServerNonce().toByteArray();
    byte[] proof =
        AuthCodes.clientProof(
            AuthCodes.appKey(bytes(appSecret), appId), appId, serverNonce, clientNonce);
    c.send(
        RawConnection.frame(
            MessageType.AUTH_PROOF,
            AuthProof.newBuilder()
                .setRequestId(2)
                .setClientProof(ByteString.copyFrom(proof))
                .build(),
            new byte[0]));
    return c.readResponse();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A well-formed request of {@code type} naming {@code appId} (shuffle 0, partition 0, ...). */
  static byte[] request(MessageType type, String appId) {
    MapPartitionRef ref =
        MapPartitionRef.newBuilder().setAppId(appId).setShuffleId(0).setMapIndex(0).build();
    MessageLite header;
    byte[] body = new byte[0];
    switch (type) {
      case REGISTER_SHUFFLE:
        header =
            RegisterShuffle.newBuilder()
                .setRequestId(7)
                .setAppId(appId)
                .setShuffleId(5)
                .setNumMaps(1)
                .setNumPartitions(1)
                .build();
        break;
      case HEARTBEAT:
        header = Heartbeat.newBuilder().setRequestId(7).setAppId(appId).build();
        break;
      case UNREGISTER_SHUFFLE:
        header = UnregisterShuffle.newBuilder().setRequestId(7).setAppId(appId).build();
        break;
      case UNREGISTER_APPLICATION:
        header = UnregisterApplication.newBuilder().setRequestId(7).setAppId(appId).build();
        break;
      case PUSH_DATA:
        header = PushData.newBuilder().setRequestId(7).setAppId(appId).setPartitionId(0).build();
        body = new byte[64];
        break;
      case PUSH_MERGED:
        header =
            PushMerged.newBuilder()
                .setRequestId(7)
                .setAppId(appId)
                .addPartitionIds(0)
                .addEpochs(0)
                .addLengths(64)
                .build();
        body = new byte[64];
        break;
      case COMMIT_SHUFFLE:
        header = CommitShuffle.newBuilder().setRequestId(7).setAppId(appId).build();
        break;
      case OPEN_STREAM:
        header =
            OpenStream.newBuilder()
                .setRequestId(7)
                .setAppId(appId)
                .setStartMapIndex(0)
                .setEndMapIndex(2)
                .build();
        break;
      case FETCH_CHUNK:
        header = FetchChunk.newBuilder().setRequestId(7).setStreamId(1).build();
        break;
      case CLOSE_STREAM:
        header = CloseStream.newBuilder().setRequestId(7).setStreamId(1).build();
        break;
      case REGION_START:
        header =
            RegionStart.newBuilder()
                .setRequestId(7)
                .setPartition(ref)
                .setNumSubpartitions(1)
                .build();
        break;
      case REGION_DATA:
        header = RegionData.newBuilder().setRequestId(7).setPartition(ref).build();
        body = new byte[64];
        break;
      case REGION_FINISH:
        header = RegionFinish.newBuilder().setRequestId(7).setPartition(ref).build();
        break;
      case COMMIT_MAP_PARTITION:
        header = CommitMapPartition.newBuilder().setRequestId(7).setPartition(ref).build();
        break;
      case RELEASE_MAP_PARTITION:
        header = ReleaseMapPartition.newBuilder().setRequestId(7).setPartition(ref).build();
        break;
      case OPEN_MAP_STREAM:
        header =
            OpenMapStream.newBuilder()
                .setRequestId(7)
                .setPartition(ref)
                .setEndSubpartition(1)
                .build();
        break;
      case READ_MAP_BUFFER:
        header = ReadMapBuffer.newBuilder().setRequestId(7).setStreamId(1).build();
        break;
      case REPORT_CHECKSUM_FAILURE:
        header =
            ReportChecksumFailure.newBuilder()
                .setRequestId(7)
                .setAppId(appId)
                .setReason("a stranger's report")
                .build();
        break;
      case GET_SHUFFLE_LOCATIONS:
        header = GetShuffleLocations.newBuilder().setRequestId(7).build();
        break;
      case MAPPER_END:
        header = MapperEnd.newBuilder().setRequestId(7).build();
        break;
      case GET_COMMITTED_SPLITS:
        header =
            GetCommittedSplits.newBuilder()
                .setRequestId(7)
                .setStartPartition(0)
                .setEndPartition(1)
                .build();
        break;
      case REVIVE_PARTITION:
        header = RevivePartition.newBuilder().setRequestId(7).build();
        break;
      default:
        throw new IllegalArgumentException(type + " is not a request");
    }
    return RawConnection.frame(type, header, body);
  }
}
