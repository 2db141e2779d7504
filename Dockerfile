# The operator's image. Not built or tested on the project's machines (they reach no container
# registry): see README, "Installing on a real cluster".
#
#   docker build -t registry.example.com/syncprims:v0.1.0 .
#   syncprims install --image registry.example.com/syncprims:v0.1.0 | kubectl apply --server-side -f -

# The kustomize helper (docs/adr/0006-kustomize-native-helper.md), as `make build` builds it.
FROM golang:1.26-bookworm AS kustomize
WORKDIR /src/kustomize
COPY kustomize/ ./
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=v5.8.1" -o /out/syncprims-kustomize .

# The Helm helper (docs/adr/0013-helm-charts.md), as `make build` builds it (HELM_LDFLAGS).
FROM golang:1.26-bookworm AS helm
WORKDIR /src/helm
COPY helm/go.mod helm/go.sum ./
RUN go mod download
COPY helm/*.go ./
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.2 -X helm.sh/helm/v4/internal/version.gitTreeState=clean" -o /out/syncprims-helm .

# The fetch helper (docs/adr/0014-git-and-oci-sources.md): Git and OCI sources, as `make build` builds it.
FROM golang:1.26-bookworm AS fetch
WORKDIR /src/fetch
COPY fetch/go.mod fetch/go.sum ./
RUN go mod download
COPY fetch/ ./
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/syncprims-fetch .

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev --ignore-scripts

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=kustomize /out/syncprims-kustomize ./dist/kustomize/syncprims-kustomize
COPY --from=helm /out/syncprims-helm ./dist/helm/syncprims-helm
COPY --from=fetch /out/syncprims-fetch ./dist/fetch/syncprims-fetch
# The system's CA bundle, for https sources (the fetch helper reads /etc/ssl/certs).
COPY --from=fetch /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# The Deployment runs it as 65532 with a read-only root filesystem (an emptyDir on /tmp).
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["run", "--leader-elect"]
