// Devices: each with a clip/memo select per input and Save (If-Match on the settings revision).
import { api } from './api';
import { DeviceCard } from './device-card';
import { Empty, LoadError, Loading } from './states';
import { useLoad } from './use-load';

export function DevicesPage() {
  const loaded = useLoad(() => api.devices(), []);
  const devices = loaded.value;
  return (
    <section aria-labelledby="devices-title">
      <div class="page-head">
        <h1 id="devices-title">Devices</h1>
        <p class="lede">Choose what each input records: a clip (a short note) or a memo (a longer recording). Changes apply to future captures.</p>
      </div>
      {!devices ? (
        loaded.error !== undefined ? <LoadError what="your devices" error={loaded.error} retry={loaded.reload} /> : <Loading what="your devices" />
      ) : devices.length === 0 ? (
        <Empty title="No devices yet.">
          <p>
            Add one on the server: <code>reclib devices add --account ID --id DEVICE_ID --name "My ring" --model ring</code>
          </p>
        </Empty>
      ) : (
        <div class="device-grid">
          {devices.map((d) => (
            <DeviceCard key={d.id} device={d} />
          ))}
        </div>
      )}
    </section>
  );
}
