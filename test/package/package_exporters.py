"""What the package's CPU tests share: a foreign stream object, objects that offer owning references,
and whether a device is present."""


class Exporter:
    """A stream object of some library: (0, address) through the CUDA Stream Protocol."""

    def __init__(self, address=0x1234):
        self.address = address

    def __cuda_stream__(self):
        return (0, self.address)


class OffersOwned:
    """An object that hands out owning references only (no __cuda_stream__)."""

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream_owned__(self):
        return self.stream.__cuda_stream_owned__()


class OffersBoth(OffersOwned):
    def __cuda_stream__(self):
        return self.stream.__cuda_stream__()


def gpu_present(streamlike):
    try:
        streamlike.Stream.create()
    except RuntimeError:
        return False
    return True
