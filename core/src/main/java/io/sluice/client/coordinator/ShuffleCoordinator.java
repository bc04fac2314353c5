package io.sluice.client.coordinator;

import io.netty.channel.ChannelHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.auth.AppKeys;
import io.sluice.auth.AuthCodes;
import io.sluice.auth.AuthConf;
import io.sluice.auth.ServerAuthenticator;
import io.sluice.client.ClientConf;
import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.client.ServerHeartbeats;
import io.sluice.client.ServerRacks;
import io.sluice.client.ServerRequests;
import io.sluice.common.Clock;
import io.sluice.common.Ids;
import io.sluice.network.Message;
import io.sluice.network.TransportServer;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.protocol.SplitPages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommitResult;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.SplitCursor;
import io.sluice.protocol.proto.Status;
import io.sluice.protocol.proto.UnregisterShuffle;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle coordinator of one application, hosted by the Spark driver or the Flink
 * ShuffleMaster. Places partitions on servers, records map completions and the winning attempt of
 * each map, commits a shuffle on its servers when its last map ends, answers readers with the
 * committed splits, moves partitions whose location fails, and unregisters. Listens on its own
 * endpoint so tasks in other JVMs reach it through {@link CoordinatorClient}. Thread safe.
 */
public final class ShuffleCoordinator implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleCoordinator.class);

  /**
   * The largest request the endpoint takes (the rest close their connection): a MapperEnd names at
   * most every server, and 1 MiB holds 30,000 of them. Bulk data is refused outright.
   */
  static final int MAX_REQUEST_SIZE = 1 << 20;

  /** Requests of the endpoint handled at once (each may wait on a server for a request timeout). */
  static final int MAX_REQUEST_THREADS = 256;

  private final String appId;
  private final List<ServerAddress> servers;
  private final ServerRacks racks;
  private final ClientContext context;
  private final Map<Integer, CoordinatedShuffle> shuffles = new ConcurrentHashMap<>();
  private final ServerExclusions exclusions;
  private final ServerRegistrations registrations;
  private final PartitionMoves moves;
  private volatile boolean commitOnLastMapEnd = true;
  private final ShuffleGenerations generations = new ShuffleGenerations();
  private final Object generationLock = new Object();
  private final TransportServer endpoint;
  private final ServerHeartbeats heartbeats;

  /**
   * Runs the endpoint's requests, which may wait for servers (each wait bounded by the request
   * timeout): at most {@link #MAX_REQUEST_THREADS} at once; a request beyond them is refused.
   */
  private final ExecutorService requests;

  /**
   * Starts the coordinator and its endpoint on {@code bindHost} and {@code
   * sluice.coordinator.port}.
   */
  public ShuffleCoordinator(
      String appId, List<ServerAddress> servers, ClientContext context, String bindHost)
      throws IOException {
    this(appId, servers, ServerRacks.UNKNOWN, context, bindHost);
  }

  /**
   * Like {@link #ShuffleCoordinator(String, List, ClientContext, String)}, with the racks of
   * servers a discovery knows ({@code known}, from YARN's node reports); hosts it does not know are
   * resolved by {@code sluice.topology.script} when one is configured. Replicas go to another rack
   * when racks are known ({@link io.sluice.client.ReplicaRule}).
   */
  public ShuffleCoordinator(
      String appId,
      List<ServerAddress> servers,
      ServerRacks known,
      ClientContext context,
      String bindHost)
      throws IOException {
    this.appId = Ids.checkAppId(appId);
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("no Sluice servers configured for application " + appId);
    }
    this.servers = List.copyOf(servers);
    this.context = context;
    this.racks = racksOf(this.servers, known, context);
    this.exclusions = new ServerExclusions(context.conf().excludeDurationMillis(), Clock.SYSTEM);
    this.registrations = new ServerRegistrations(appId, this.servers, exclusions, context);
    this.moves =
        new PartitionMoves(
            appId, servers, racks, exclusions, registrations::registerOn, context.metrics());
    this.requests =
        new ThreadPoolExecutor(
            0,
            MAX_REQUEST_THREADS,
            60,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            new DefaultThreadFactory("sluice-coordinator-" + appId, true));
    try {
      this.endpoint =
          new TransportServer(
              "sluice-coordinator-" + appId,
              context.networkConf(),
              SluiceProtocol.INSTANCE,
              new CoordinatorRequestHandler(this),
              bindHost,
              context.conf().coordinatorPort(),
              Math.min(MAX_REQUEST_SIZE, context.networkConf().maxFrameSize()),
              null,
              endpointGate(appId, context.auth()),
              null);
    } catch (InterruptedException e) {
      requests.shutdownNow();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the coordinator endpoint", e);
    }
    this.heartbeats =
        new ServerHeartbeats(
            context,
            appId,
            registrations::servers,
            (server, why) -> LOG.warn("{}", why.getMessage()));
  }

  public String appId() {
    return appId;
  }

  /** The racks of {@code servers}: {@code known}, else the topology script's (if any). */
  private static ServerRacks racksOf(
      List<ServerAddress> servers, ServerRacks known, ClientContext context) {
    List<String> unknown = new ArrayList<>();
    for (ServerAddress s : servers) {
      if (!known.knows(s.getHost())) {
        unknown.add(s.getHost());
      }
    }
    ServerRacks racks = unknown.isEmpty() ? known : known.orElse(context.racks(unknown));
    LOG.info("Racks of the Sluice servers: {}", racks);
    return racks;
  }

  /** The racks of the servers, as far as they are known. */
  public ServerRacks racks() {
    return racks;
  }

  /** Runs a request of the endpoint on the coordinator's threads. */
  void run(Runnable request) {
    try {
      requests.execute(request);
    } catch (RejectedExecutionException e) {
      LOG.warn(
          "Coordinator of {} is closed or has {} requests in progress; a request goes unanswered"
              + " (its sender times out and retries)",
          appId,
          MAX_REQUEST_THREADS);
    }
  }

  /** The port of the coordinator's endpoint. */
  public int port() {
    return endpoint.port();
  }

  /**
   * Registers a shuffle and places its partitions round robin over the servers, starting at a
   * random one. A server that refuses registration is skipped. A shuffle without maps is committed
   * at once (empty), since no map will ever end it. The placement is a rule, not a list ({@link
   * PartitionLocations}): a shuffle of 16,777,217 partitions costs what one of ten does.
   *
   * @throws IOException when no server accepts the shuffle
   */
  public void registerShuffle(int shuffleId, int numMaps, int numPartitions) throws IOException {
    if (numMaps < 0 || numPartitions < 0) {
      throw new IllegalArgumentException(
          "shuffle " + shuffleId + " needs non-negative map and partition counts");
    }
    if (generations.isGeneration(shuffleId)) {
      throw new IllegalArgumentException(
          Ids.shuffle(appId, shuffleId) + " is taken by a later generation of another shuffle");
    }
    List<ServerAddress> usable = registrations.registerShuffle(shuffleId, numMaps, numPartitions);
    int start = ThreadLocalRandom.current().nextInt(usable.size());
    int factor = context.conf().replicationFactor();
    if (factor > 1 && usable.size() < 2) {
      LOG.warn(
          "{} is written without replicas: sluice.replication.factor is {} but only {} can take"
              + " it",
          Ids.shuffle(appId, shuffleId),
          factor,
          ClientContext.format(usable.get(0)));
    }
    shuffles.put(
        shuffleId,
        new CoordinatedShuffle(
            shuffleId,
            numMaps,
            PartitionLocations.roundRobin(shuffleId, numPartitions, usable, start, factor, racks)));
    LOG.info(
        "Registered {} with {} maps and {} partitions on {} servers",
        Ids.shuffle(appId, shuffleId),
        numMaps,
        numPartitions,
        usable.size());
    if (numMaps == 0) {
      // no map will ever report its end: there is nothing to wait for
      commit(shuffleId);
    }
  }

  CoordinatedShuffle shuffle(int shuffleId) {
    CoordinatedShuffle s = shuffles.get(shuffleId);
    if (s == null) {
      throw new IllegalArgumentException(
          Ids.shuffle(appId, shuffleId) + " is not registered with the coordinator");
    }
    return s;
  }

  /** Where every partition of the shuffle is written now (O(servers + moves), see the class). */
  public PartitionLocations locations(int shuffleId) {
    return shuffle(shuffleId).locations();
  }

  /**
   * The shuffle id that writers of {@code shuffleId} push to and report to now: its newest
   * generation (the shuffle itself at first) while that generation's commit has not started, else a
   * new generation, registered on the servers with the shuffle's map and partition counts (see
   * {@link ShuffleGenerations}). Unregistering the shuffle unregisters all its generations.
   *
   * @throws IOException when a new generation is needed and no server accepts it
   * @throws IllegalArgumentException when the shuffle is not registered
   */
  public int openGeneration(int shuffleId) throws IOException {
    synchronized (generationLock) {
      int latest = generations.latest(shuffleId);
      CoordinatedShuffle s = shuffle(latest);
      if (!s.isCommitStarted()) {
        return latest;
      }
      int next = generations.nextFreeId(shuffles::containsKey);
      registerShuffle(next, s.numMaps(), s.numPartitions());
      generations.add(shuffleId, next);
      LOG.info(
          "{} is committed; maps written from now on go to its new generation {}",
          Ids.shuffle(appId, latest),
          next);
      return next;
    }
  }

  /**
   * Records a map completion (the first attempt of a map to report wins) and the servers that hold
   * its data; commits the shuffle when it was the last map.
   */
  public void mapperEnd(
      int shuffleId, int mapIndex, int attempt, List<ServerAddress> serversWritten) {
    mapperEnd(shuffleId, mapIndex, attempt, serversWritten, null, false);
  }

  /**
   * Like {@link #mapperEnd(int, int, int, List)}, with a page of the attempt's integrity records
   * ({@link PartitionRecords}; null when the attempt reports none, and then readers do not compare
   * what they read of it). With {@code moreRecords} more pages follow and the map has not ended
   * yet. The records of every attempt that ends are kept (the engine may pick another attempt than
   * the first one to end, see {@link MapRecordStore}), also after the commit.
   */
  public void mapperEnd(
      int shuffleId,
      int mapIndex,
      int attempt,
      List<ServerAddress> serversWritten,
      PartitionRecords records,
      boolean moreRecords) {
    CoordinatedShuffle s = shuffle(shuffleId);
    if (mapIndex < 0 || mapIndex >= s.numMaps() || attempt < 0) {
      throw new IllegalArgumentException(
          "map "
              + mapIndex
              + " attempt "
              + attempt
              + " is out of range for "
              + Ids.shuffle(appId, shuffleId)
              + " with "
              + s.numMaps()
              + " maps");
    }
    if (records != null) {
      s.records().add(mapIndex, attempt, records, moreRecords);
    }
    if (moreRecords) {
      return;
    }
    if (s.mapperEnded(mapIndex, attempt, serversWritten) && commitOnLastMapEnd) {
      commit(shuffleId);
    }
  }

  /**
   * Leaves the start of each commit to the engine: its scheduler when it finds the map stage
   * complete ({@link #commitIfRegistered}), or else the shuffle's first reader ({@link
   * #awaitCommit} with {@code commitNow}, which a reader sends once its scheduler has the map stage
   * complete), instead of starting it when every map reported an end. For an engine whose
   * scheduler, not the first report of each map, decides which attempts count: in Spark a map task
   * reports its end and can still fail or be discarded (a barrier stage failed after the barrier,
   * an executor lost), and its rerun then pushes to the same generation; a commit started by the
   * stale report would refuse the rerun's pushes (STAGE_ENDED), failing the task and, in a barrier
   * stage, the whole attempt.
   */
  public void commitWhenReadersAsk() {
    commitOnLastMapEnd = false;
  }

  /**
   * Commits the shuffle on every server that holds one of its splits (once; later calls return the
   * same future). Partitions on a server that fails to commit are reported lost. A server answers
   * with pages of its splits ({@link SplitPages}); the coordinator asks for every page.
   */
  public CompletableFuture<ShuffleCommit> commit(int shuffleId) {
    return commit(shuffle(shuffleId), shuffleId);
  }

  /**
   * Starts the commit of a shuffle (or generation) whose every map the engine's scheduler has just
   * found complete, so that it runs while the reduce stage is being scheduled rather than after its
   * first reader asks. Nothing when it is not registered (any more) or its commit has started.
   *
   * @return whether the shuffle is registered
   */
  public boolean commitIfRegistered(int shuffleId) {
    CoordinatedShuffle s = shuffles.get(shuffleId);
    if (s == null) {
      return false;
    }
    commit(s, shuffleId);
    return true;
  }

  private CompletableFuture<ShuffleCommit> commit(CoordinatedShuffle s, int shuffleId) {
    if (!s.startCommit()) {
      return s.committed();
    }
    List<ServerAddress> targets = s.servers();
    s.commitSentTo(targets);
    List<CompletableFuture<List<CommittedSplit>>> results = new ArrayList<>();
    for (ServerAddress server : targets) {
      CompletableFuture<List<CommittedSplit>> result =
          commitOn(server, shuffleId, s.replicationFactor() == 1);
      result.whenComplete((splits, error) -> s.commitAnswered(server));
      results.add(result);
    }
    CompletableFuture.allOf(results.toArray(new CompletableFuture<?>[0]))
        .whenComplete(
            (v, e) -> {
              List<CommittedSplit> splits = new ArrayList<>();
              BitSet lost = new BitSet();
              StringBuilder reasons = new StringBuilder();
              StringBuilder failedCommits = new StringBuilder();
              for (int i = 0; i < targets.size(); i++) {
                try {
                  splits.addAll(results.get(i).join());
                } catch (RuntimeException failure) {
                  if (!s.holdsEndedData(targets.get(i))) {
                    LOG.warn(
                        "Commit of {} failed on {}, which holds no data of a map attempt that"
                            + " ended: {}",
                        Ids.shuffle(appId, shuffleId),
                        ClientContext.format(targets.get(i)),
                        failure.getMessage());
                    continue;
                  }
                  if (s.replicationFactor() > 1) {
                    // its partitions' other copies decide: CommitCompleteness below counts
                    // what the servers that committed hold
                    LOG.warn(
                        "Commit of {} failed on {}; the other copies of its splits are read: {}",
                        Ids.shuffle(appId, shuffleId),
                        ClientContext.format(targets.get(i)),
                        failure.getMessage());
                    failedCommits
                        .append(ClientContext.format(targets.get(i)))
                        .append(": ")
                        .append(
                            failure.getCause() == null ? failure : failure.getCause().getMessage())
                        .append("; ");
                    continue;
                  }
                  lost.or(s.partitionsOn(targets.get(i)));
                  reasons
                      .append(ClientContext.format(targets.get(i)))
                      .append(": ")
                      .append(
                          failure.getCause() == null ? failure : failure.getCause().getMessage())
                      .append("; ");
                }
              }
              String shortOf =
                  CommitCompleteness.check(
                      splits, s.records().acknowledgedBytes(s.numPartitions()), lost);
              if (!shortOf.isEmpty()) {
                reasons.append(shortOf).append("; ").append(failedCommits);
              }
              if (!lost.isEmpty()) {
                LOG.error(
                    "Commit of {} lost {} partition(s): {}",
                    Ids.shuffle(appId, shuffleId),
                    lost.cardinality(),
                    reasons);
              } else {
                LOG.info(
                    "Committed {}: {} splits on {} servers",
                    Ids.shuffle(appId, shuffleId),
                    splits.size(),
                    targets.size());
              }
              s.completeCommit(splits, lost, reasons.toString());
            });
    return s.committed();
  }

  /**
   * The commit of the shuffle on {@code server}, failing early when the server is silent. With
   * {@code waitForRestart} (the shuffle's only copy), asked again while the server refuses or drops
   * the connection as a restarting one does ({@link io.sluice.client.ServerRestartWait}): its open
   * splits were committed when it stopped, and it answers with them when it is back. With two
   * copies the other copies decide at once.
   */
  private CompletableFuture<List<CommittedSplit>> commitOn(
      ServerAddress server, int shuffleId, boolean waitForRestart) {
    Supplier<CompletableFuture<List<CommittedSplit>>> commit =
        () ->
            context
                .silentServers()
                .watch(appId, server, commitPage(server, shuffleId, null, new ArrayList<>()));
    return waitForRestart
        ? context
            .restarts()
            .retryAsync(server, "the commit of " + Ids.shuffle(appId, shuffleId), commit)
        : commit.get();
  }

  /** Asks {@code server} for the page of its commit answer at {@code resume}, then the next. */
  private CompletableFuture<List<CommittedSplit>> commitPage(
      ServerAddress server, int shuffleId, SplitCursor resume, List<CommittedSplit> into) {
    return context
        .callAsync(
            appId,
            server,
            id -> {
              CommitShuffle.Builder request =
                  CommitShuffle.newBuilder()
                      .setRequestId(id)
                      .setAppId(appId)
                      .setShuffleId(shuffleId);
              if (resume != null) {
                request.setResume(resume);
              }
              return Messages.request(MessageType.COMMIT_SHUFFLE, request.build(), id);
            })
        .thenCompose(
            response -> {
              response.release();
              CommitResult page = response.header(Response.class).getCommit();
              for (CommittedSplit split : page.getSplitsList()) {
                into.add(split.toBuilder().setServer(server).build());
              }
              return page.hasNext()
                  ? commitPage(server, shuffleId, page.getNext(), into)
                  : CompletableFuture.completedFuture(into);
            });
  }

  /**
   * With authentication, the endpoint serves only connections that prove they hold this
   * application's key; a coordinator must also hold the cluster secret, to register the key at the
   * servers.
   */
  private static Supplier<ChannelHandler> endpointGate(String appId, AuthConf auth) {
    if (!auth.enabled()) {
      return null;
    }
    auth.requireClusterSecret();
    AppKeys keys = AppKeys.single(appId, AuthCodes.appKey(auth.requireAppSecret(), appId));
    return ServerAuthenticator.gate("sluice-coordinator-" + appId, keys, auth, () -> {});
  }

  /** The commit of a shuffle, completing when it is done. */
  public CompletableFuture<ShuffleCommit> committed(int shuffleId) {
    return shuffle(shuffleId).committed();
  }

  /**
   * The commit a reader of partitions [startPartition, endPartition) waits for, bounded by {@code
   * sluice.coordinator.commitTimeout}: completes with the commit, or fails with a {@link
   * StatusException} ({@code NOT_READY}) naming the application, the shuffle, the partitions and
   * what the commit still waited for when the bound passed (the maps that never reported their end,
   * or the servers that did not answer the commit), or ({@code SHUFFLE_NOT_REGISTERED}) when the
   * shuffle is unregistered first. With {@code commitNow} the commit starts now if it has not (see
   * {@link CoordinatorClient#committedSplits(int, int, int, boolean)}).
   *
   * @throws IllegalArgumentException when the shuffle is not registered
   */
  public CompletableFuture<ShuffleCommit> awaitCommit(
      int shuffleId, int startPartition, int endPartition, boolean commitNow) {
    CoordinatedShuffle s = shuffle(shuffleId);
    CompletableFuture<ShuffleCommit> commit = commitNow ? commit(shuffleId) : s.committed();
    if (commit.isDone()) {
      return commit;
    }
    long timeoutMillis = context.conf().commitTimeoutMillis();
    CompletableFuture<ShuffleCommit> bounded = new CompletableFuture<>();
    ScheduledFuture<?> deadline =
        context
            .scheduler()
            .schedule(
                () ->
                    bounded.completeExceptionally(
                        new StatusException(
                            Status.NOT_READY,
                            "The commit of "
                                + Ids.shuffle(appId, shuffleId)
                                + " that a reader of partitions ["
                                + startPartition
                                + ", "
                                + endPartition
                                + ") waits for did not complete within "
                                + timeoutMillis
                                + " ms ("
                                + ClientConf.COMMIT_TIMEOUT.name()
                                + "): "
                                + s.awaited())),
                timeoutMillis,
                TimeUnit.MILLISECONDS);
    commit.whenComplete(
        (c, error) -> {
          deadline.cancel(false);
          if (error != null) {
            bounded.completeExceptionally(
                error instanceof CompletionException && error.getCause() != null
                    ? error.getCause()
                    : error);
          } else {
            bounded.complete(c);
          }
        });
    return bounded;
  }

  /**
   * Moves a partition off the location that failed at {@code failedEpoch} (a split that is full, or
   * refused more data); see {@link PartitionMoves#revive}.
   */
  public PartitionLocation revive(int shuffleId, int partitionId, int failedEpoch, String reason)
      throws IOException {
    return moves.revive(shuffle(shuffleId), partitionId, failedEpoch, reason);
  }

  /**
   * Moves every partition of the shuffle that a failed server held, in one round; see {@link
   * PartitionMoves#reviveAfterServerFailure}.
   *
   * @return every location of the shuffle now
   */
  public PartitionLocations reviveAfterServerFailure(
      int shuffleId, int partitionId, int failedEpoch, String reason, boolean replicaFailed)
      throws IOException {
    return moves.reviveAfterServerFailure(
        shuffle(shuffleId), partitionId, failedEpoch, reason, replicaFailed);
  }

  /** Forgets the shuffle and its generations and deletes their files on every server. */
  public void unregisterShuffle(int shuffleId) {
    List<Integer> later;
    synchronized (generationLock) {
      later = generations.remove(shuffleId);
    }
    for (int generation : later) {
      unregisterOne(generation);
    }
    unregisterOne(shuffleId);
  }

  private void unregisterOne(int shuffleId) {
    CoordinatedShuffle s = shuffles.remove(shuffleId);
    if (s == null) {
      return;
    }
    s.abandon(
        Ids.shuffle(appId, shuffleId)
            + " was unregistered before its commit completed; "
            + s.awaited()
            + " then");
    for (ServerAddress server : s.servers()) {
      try {
        context.call(
            appId,
            server,
            id ->
                Messages.request(
                    MessageType.UNREGISTER_SHUFFLE,
                    UnregisterShuffle.newBuilder()
                        .setRequestId(id)
                        .setAppId(appId)
                        .setShuffleId(shuffleId)
                        .build(),
                    id));
      } catch (IOException | StatusException e) {
        LOG.warn(
            "Could not unregister {} on {} (its files go when the application expires): {}",
            Ids.shuffle(appId, shuffleId),
            ClientContext.format(server),
            e.getMessage());
      }
    }
  }

  /**
   * Deletes the files of another application, {@code earlierAppId}, on every server, without
   * waiting: an earlier attempt of this application's driver whose data nobody will read. Best
   * effort; what is not deleted expires with {@code sluice.app.timeout}.
   */
  public void releaseApplication(String earlierAppId) {
    Ids.checkAppId(earlierAppId);
    // connecting may wait on a server that is down: not on the caller's thread
    run(() -> releaseNow(earlierAppId));
  }

  private void releaseNow(String earlierAppId) {
    for (ServerAddress server : servers) {
      context
          .callAsync(earlierAppId, server, ServerRequests.unregisterApplication(earlierAppId))
          .whenComplete(
              (m, e) -> {
                if (m != null) {
                  m.release();
                  LOG.info(
                      "Released the data of earlier driver attempt {} on {}",
                      earlierAppId,
                      ClientContext.format(server));
                }
              });
    }
  }

  /**
   * Unregisters the application on every server it registered on, all at once; waits for the
   * answers, but not for a silent server's (see {@link io.sluice.client.SilentServerWatch}): a
   * server that does not answer expires the application after sluice.app.timeout instead.
   */
  private void unregisterEverywhere() {
    List<CompletableFuture<Void>> answers = new ArrayList<>();
    for (ServerAddress server : registrations.servers()) {
      answers.add(
          context
              .silentServers()
              .watch(
                  appId,
                  server,
                  context.callAsync(appId, server, ServerRequests.unregisterApplication(appId)),
                  Message::release)
              .handle(
                  (answer, e) -> {
                    if (answer != null) {
                      answer.release();
                    } else {
                      LOG.warn(
                          "Could not unregister application {} on {}: {}",
                          appId,
                          ClientContext.format(server),
                          e.getMessage());
                    }
                    return null;
                  }));
    }
    try {
      CompletableFuture.allOf(answers.toArray(new CompletableFuture<?>[0]))
          .get(context.networkConf().requestTimeoutMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("Unregistering application {} did not finish: {}", appId, e.toString());
    }
  }

  @Override
  public void close() {
    heartbeats.close();
    endpoint.close();
    requests.shutdown();
    unregisterEverywhere();
    for (CoordinatedShuffle s : shuffles.values()) {
      s.abandon(
          "the coordinator of application "
              + appId
              + " stopped before the commit of shuffle "
              + s.shuffleId()
              + " completed; "
              + s.awaited()
              + " then");
    }
    shuffles.clear();
  }
}
