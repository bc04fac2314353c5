package org.apache.spark.shuffle.sluice;

import com.esotericsoftware.kryo.Kryo;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.serializer.KryoRegistrator;

/** Counts the Kryo instances Spark builds: it registers classes once per new instance. */
public final class CountingKryoRegistrator implements KryoRegistrator {
  static final AtomicInteger BUILT = new AtomicInteger();

  @Override
  public void registerClasses(Kryo kryo) {
    BUILT.incrementAndGet();
  }
}
