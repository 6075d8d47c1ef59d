#include <boost/beast/http/field.hpp>
#include <cstdio>

#include "services/http/exchange_state.h"

namespace septa::http::internal {

ExchangeHandle::~ExchangeHandle() {
  bool kick = false;
  {
    std::lock_guard lock(state_->mu);
    if (state_->phase == Phase::kWaiting && !state_->closed) {
      Response res = PlainTextError(HttpStatus::internal_server_error, "the handler dropped the request");
      state_->response = std::move(res);
      state_->phase = Phase::kReplied;
      kick = true;
    } else if (state_->phase == Phase::kStreaming) {
      state_->phase = Phase::kStreamEnded;
      kick = true;
    }
  }
  if (kick) conn_->Kick();
}

void ExchangeHandle::Reply(Response response) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->phase != Phase::kWaiting || state_->closed) return;
    state_->response = std::move(response);
    state_->phase = Phase::kReplied;
  }
  conn_->Kick();
}

void ExchangeHandle::StartStream(Response head) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->phase != Phase::kWaiting || state_->closed) return;
    head.body().clear();
    state_->response = std::move(head);
    state_->phase = Phase::kStreaming;
  }
  conn_->Kick();
}

bool ExchangeHandle::WriteChunk(std::vector<std::shared_ptr<const std::string>> parts) {
  static const auto kCrlf = std::make_shared<const std::string>("\r\n");
  std::size_t size = 0;
  for (const auto& part : parts) size += part->size();
  bool too_slow = false;
  {
    std::lock_guard lock(state_->mu);
    if (state_->closed || state_->phase != Phase::kStreaming) return false;
    if (size == 0) return true;  // an empty chunk would end the stream
    char size_line[24];
    int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", size);
    state_->chunks.push_back(std::make_shared<const std::string>(size_line, static_cast<std::size_t>(n)));
    for (auto& part : parts) {
      if (!part->empty()) state_->chunks.push_back(std::move(part));
    }
    state_->chunks.push_back(kCrlf);
    state_->chunk_bytes += static_cast<std::size_t>(n) + size + kCrlf->size();
    too_slow = state_->chunk_bytes > conn_->max_stream_buffer();
  }
  if (too_slow) {
    conn_->Abort();
    return false;
  }
  conn_->Kick();
  return true;
}

void ExchangeHandle::EndStream() {
  {
    std::lock_guard lock(state_->mu);
    if (state_->phase != Phase::kStreaming) return;
    state_->phase = Phase::kStreamEnded;
  }
  conn_->Kick();
}

void ExchangeHandle::OnClose(std::function<void()> callback) {
  {
    std::lock_guard lock(state_->mu);
    if (!state_->closed) {
      state_->on_close.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

bool ExchangeHandle::closed() const {
  std::lock_guard lock(state_->mu);
  return state_->closed;
}

std::vector<std::function<void()>> MarkClosed(ExchangeState& state) {
  std::lock_guard lock(state.mu);
  state.closed = true;
  return std::move(state.on_close);
}

}  // namespace septa::http::internal

namespace septa::http {

Response PlainTextError(HttpStatus status, std::string_view message) {
  Response res{status, 11};
  res.set(boost::beast::http::field::content_type, "text/plain; charset=utf-8");
  res.body().assign(message);
  res.body().push_back('\n');
  return res;
}

}  // namespace septa::http
